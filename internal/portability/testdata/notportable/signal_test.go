package notportable

import "testing"

// Test files are checked too.
func TestAttrs(t *testing.T) { _ = attrs() }

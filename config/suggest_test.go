package config

import (
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"openai", "openai", 0}, {"openia", "openai", 1}, {"modle", "model", 1},
		{"modle", "mode", 1}, {"ollama", "olama", 1}, {"azure", "google", 5}, {"", "abc", 3},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	for s, want := range map[string]string{
		"openia":    "openai",
		"OPENAI":    "openai",
		"antropic":  "anthropic",
		"mistral":   "",
		"ab":        "",
		"gogle":     "google",
		"bulitin":   "builtin",
		"oolama":    "ollama",
		"openai":    "openai",
		"azur":      "azure",
		"something": "",
	} {
		if got := strings.Join(closest(s, providers()), ","); got != want {
			t.Errorf("closest(%q) = %q, want %q", s, got, want)
		}
	}
	if got := strings.Join(closest("modle", []string{"mode", "model", "mode2"}), ","); got != "mode,model" {
		t.Errorf("ties: %q, want mode,model", got)
	}
}

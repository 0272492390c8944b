package evalset

import (
	"fmt"
	"hash/fnv"
)

// Split selects a deterministic half of a set.
type Split string

// The splits. Tune is the half heuristics may be tuned on; HeldOut is the
// half results are reported on to show they were not fitted to it.
const (
	All     Split = "all"
	Tune    Split = "tune"
	HeldOut Split = "heldout"
)

// ParseSplit accepts "all", "tune" or "heldout".
func ParseSplit(s string) (Split, error) {
	switch Split(s) {
	case All, Tune, HeldOut:
		return Split(s), nil
	}
	return "", fmt.Errorf("unknown split %q (want all, tune or heldout)", s)
}

// SplitOf assigns an ID to Tune or HeldOut by its FNV-1a hash, so that the
// assignment depends neither on file order nor on which other retrievals a
// set holds.
func SplitOf(id string) Split {
	h := fnv.New32a()
	h.Write([]byte(id))
	if h.Sum32()%2 == 0 {
		return Tune
	}
	return HeldOut
}

// Contains reports whether a retrieval of half h is part of s.
func (s Split) Contains(h Split) bool { return s == All || s == h }

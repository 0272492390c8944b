package lexical

import (
	"fmt"
	"math"
	"testing"
)

// appendFixed's fast path prints what fmt prints near every rounding
// boundary: exact ties (which fmt rounds to even) and the floats either side.
func TestAppendFixedNearTies(t *testing.T) {
	for _, den := range []float64{8, 200, 1000, 1600, 3} {
		for i := 0; i <= 40000; i++ {
			v := float64(i) / den
			for _, w := range []float64{v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)), -v} {
				for _, prec := range []int{0, 2} {
					if got, want := string(appendFixed(nil, w, prec)), fmt.Sprintf("%.*f", prec, w); got != want {
						t.Fatalf("appendFixed(%v, %d) = %q, fmt %q", w, prec, got, want)
					}
				}
			}
		}
	}
}

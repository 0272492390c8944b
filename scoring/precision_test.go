package scoring

import (
	"math"
	"testing"
)

func bools(v ...int) []bool {
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x == 1
	}
	return out
}

// TestContextualPrecisionWorkedValues pins the worked values of the README's
// Contextual Precision section.
func TestContextualPrecisionWorkedValues(t *testing.T) {
	tests := []struct {
		verdicts []int
		want     float64
		relevant int
	}{
		{[]int{1, 0, 1}, 5.0 / 6.0, 2},
		{[]int{0, 1, 1}, 7.0 / 12.0, 2},
		{[]int{0, 0, 1}, 1.0 / 3.0, 1},
		{[]int{0, 1}, 0.5, 1},
		{[]int{1, 0, 0, 1, 0}, 0.75, 2},
		{[]int{1, 1, 0}, 1.0, 2},
		{[]int{0, 0, 0}, 0, 0},
		{[]int{1}, 1, 1},
		{[]int{0}, 0, 0},
	}
	for _, tc := range tests {
		s, ok := ContextualPrecision(bools(tc.verdicts...), 0)
		if !ok {
			t.Fatalf("%v: no score", tc.verdicts)
		}
		if math.Abs(s.Value-tc.want) > 1e-12 {
			t.Errorf("%v: CP = %.15f, want %.15f", tc.verdicts, s.Value, tc.want)
		}
		if s.K != len(tc.verdicts) || s.Relevant != tc.relevant {
			t.Errorf("%v: K=%d relevant=%d, want %d %d", tc.verdicts, s.K, s.Relevant, len(tc.verdicts), tc.relevant)
		}
	}
}

// All relevant must be exactly 1.0: no epsilon in numerator or denominator.
func TestContextualPrecisionNoEpsilon(t *testing.T) {
	for n := 1; n <= 50; n++ {
		v := make([]bool, n)
		for i := range v {
			v[i] = true
		}
		s, _ := ContextualPrecision(v, 0)
		if s.Value != 1.0 {
			t.Fatalf("all %d relevant: CP = %v, want exactly 1", n, s.Value)
		}
	}
}

func TestContextualPrecisionEmptyHasNoScore(t *testing.T) {
	if _, ok := ContextualPrecision(nil, 0); ok {
		t.Fatal("nil verdicts scored")
	}
	if _, ok := ContextualPrecision([]bool{}, 3); ok {
		t.Fatal("empty verdicts scored")
	}
}

func TestContextualPrecisionTopK(t *testing.T) {
	v := bools(0, 1, 0, 0, 1)
	tests := []struct {
		topK, k, relevant int
		want              float64
	}{
		{0, 5, 2, (0.5 + 0.4) / 2}, // all chunks
		{1, 1, 0, 0},
		{2, 2, 1, 0.5},
		{4, 4, 1, 0.5},
		{5, 5, 2, 0.45},
		{9, 5, 2, 0.45}, // larger than K: all chunks
	}
	for _, tc := range tests {
		s, ok := ContextualPrecision(v, tc.topK)
		if !ok || s.K != tc.k || s.Relevant != tc.relevant || math.Abs(s.Value-tc.want) > 1e-12 {
			t.Errorf("top_k=%d: got %+v ok=%v, want K=%d relevant=%d CP=%v", tc.topK, s, ok, tc.k, tc.relevant, tc.want)
		}
	}
}

// A reference implementation written the way the README states the formula,
// checked against the incremental one on every verdict list up to length 12.
func TestContextualPrecisionMatchesFormula(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for mask := 0; mask < 1<<n; mask++ {
			v := make([]bool, n)
			for i := range v {
				v[i] = mask&(1<<i) != 0
			}
			var num, den float64
			for k := 1; k <= n; k++ {
				vk := 0.0
				if v[k-1] {
					vk = 1
				}
				hits := 0.0
				for j := 0; j < k; j++ {
					if v[j] {
						hits++
					}
				}
				num += hits / float64(k) * vk
				den += vk
			}
			want := 0.0
			if den > 0 {
				want = num / den
			}
			s, _ := ContextualPrecision(v, 0)
			if math.Abs(s.Value-want) > 1e-12 {
				t.Fatalf("%v: CP = %v, formula = %v", v, s.Value, want)
			}
		}
	}
}

func TestPassedThresholdBoundary(t *testing.T) {
	if !Passed(0.7, 0.7) {
		t.Error("CP == threshold must pass")
	}
	if Passed(math.Nextafter(0.7, 0), 0.7) {
		t.Error("CP just below threshold must fail")
	}
	if !Passed(1, 1) || !Passed(0, 0) {
		t.Error("boundaries at 0 and 1 must pass")
	}
	s, _ := ContextualPrecision(bools(0, 1), 0)
	if !Passed(s.Value, 0.5) || Passed(s.Value, 0.5000001) {
		t.Errorf("CP 0.5 against thresholds 0.5 / 0.5000001")
	}
}

func BenchmarkContextualPrecision(b *testing.B) {
	v := bools(1, 0, 1, 1, 0, 0, 1, 0, 0, 1)
	for b.Loop() {
		ContextualPrecision(v, 0)
	}
}

package scoring

import (
	"math"
	"testing"
)

// TestDiagnoseWorkedValues pins the worked values of the component README's retrieval
// diagnostics, and the edge cases: one chunk, all relevant, none relevant.
func TestDiagnoseWorkedValues(t *testing.T) {
	tests := []struct {
		verdicts []int
		want     Diagnostics
	}{
		{[]int{1, 0, 1}, Diagnostics{OutcomeMisranked, 1, 1, (1 + 0.5) / (1 + 1/math.Log2(3)), 2.0 / 3}},
		{[]int{0, 0, 1}, Diagnostics{OutcomeMisranked, 3, 1.0 / 3, 0.5, 1.0 / 3}},
		{[]int{1, 1, 0}, Diagnostics{OutcomeIdeal, 1, 1, 1, 2.0 / 3}},
		{[]int{0, 0, 0}, Diagnostics{OutcomeMiss, 0, 0, 0, 0}},
		{[]int{1}, Diagnostics{OutcomeIdeal, 1, 1, 1, 1}},
		{[]int{0}, Diagnostics{OutcomeMiss, 0, 0, 0, 0}},
		{[]int{1, 1, 1, 1, 1}, Diagnostics{OutcomeIdeal, 1, 1, 1, 1}},
		{[]int{0, 1}, Diagnostics{OutcomeMisranked, 2, 0.5, 1 / math.Log2(3), 0.5}},
		// nDCG = (1 + 1/log2 5) / (1 + 1/log2 3), CP = 0.75.
		{[]int{1, 0, 0, 1, 0}, Diagnostics{OutcomeMisranked, 1, 1, (1 + 1/math.Log2(5)) / (1 + 1/math.Log2(3)), 0.4}},
	}
	for _, tc := range tests {
		d, ok := Diagnose(bools(tc.verdicts...), 0)
		if !ok {
			t.Fatalf("%v: no diagnostics", tc.verdicts)
		}
		if d.Outcome != tc.want.Outcome || d.FirstRelevantRank != tc.want.FirstRelevantRank ||
			math.Abs(d.ReciprocalRank-tc.want.ReciprocalRank) > 1e-12 || math.Abs(d.NDCG-tc.want.NDCG) > 1e-12 ||
			math.Abs(d.Precision-tc.want.Precision) > 1e-12 {
			t.Errorf("%v: got %+v, want %+v", tc.verdicts, d, tc.want)
		}
	}
	// The four digits the component README quotes.
	d, _ := Diagnose(bools(1, 0, 1), 0)
	if got := math.Round(d.NDCG*1e4) / 1e4; got != 0.9197 {
		t.Errorf("[1,0,1]: nDCG %.4f, want 0.9197", got)
	}
}

// All relevant, and every ideal ranking, is exactly 1: the DCG and its ideal
// add the same discounts in the same order.
func TestDiagnoseIdealIsExactlyOne(t *testing.T) {
	for n := 1; n <= 200; n++ {
		for r := 1; r <= n; r += 1 + n/7 {
			v := make([]bool, n)
			for i := 0; i < r; i++ {
				v[i] = true
			}
			d, _ := Diagnose(v, 0)
			if d.NDCG != 1 || d.Outcome != OutcomeIdeal || d.ReciprocalRank != 1 {
				t.Fatalf("%d relevant on top of %d: %+v", r, n, d)
			}
		}
	}
}

func TestDiagnoseEmptyHasNoDiagnostics(t *testing.T) {
	if _, ok := Diagnose(nil, 0); ok {
		t.Fatal("nil verdicts diagnosed")
	}
	if _, ok := Diagnose([]bool{}, 2); ok {
		t.Fatal("empty verdicts diagnosed")
	}
}

// top_k cuts the verdicts before anything is counted, as for CP: a relevant
// chunk below the cut makes a miss.
func TestDiagnoseTopK(t *testing.T) {
	v := bools(0, 0, 1, 1)
	for _, tc := range []struct {
		topK      int
		outcome   Outcome
		first     int
		precision float64
	}{
		{0, OutcomeMisranked, 3, 0.5},
		{2, OutcomeMiss, 0, 0},
		{3, OutcomeMisranked, 3, 1.0 / 3},
		{9, OutcomeMisranked, 3, 0.5},
	} {
		d, ok := Diagnose(v, tc.topK)
		if !ok || d.Outcome != tc.outcome || d.FirstRelevantRank != tc.first || math.Abs(d.Precision-tc.precision) > 1e-12 {
			t.Errorf("top_k=%d: %+v ok=%v, want %s first %d precision %v", tc.topK, d, ok, tc.outcome, tc.first, tc.precision)
		}
	}
}

// A reference written the way the definitions read (a sorted copy for the
// ideal DCG, CP for the outcome), against Diagnose on every verdict list up
// to length 12, and on a few long ones past the discount table.
func TestDiagnoseMatchesDefinitions(t *testing.T) {
	check := func(v []bool) {
		t.Helper()
		var dcg, idcg float64
		relevant, first := 0, 0
		for k := 1; k <= len(v); k++ {
			if v[k-1] {
				dcg += 1 / math.Log2(float64(k+1))
				relevant++
				if first == 0 {
					first = k
				}
			}
		}
		for k := 1; k <= relevant; k++ {
			idcg += 1 / math.Log2(float64(k+1))
		}
		cp, _ := ContextualPrecision(v, 0)
		want := Diagnostics{Outcome: OutcomeMiss, FirstRelevantRank: first, Precision: float64(relevant) / float64(len(v))}
		if relevant > 0 {
			want.Outcome = OutcomeMisranked
			if cp.Value == 1 {
				want.Outcome = OutcomeIdeal
			}
			want.ReciprocalRank = 1 / float64(first)
			want.NDCG = dcg / idcg
		}
		d, _ := Diagnose(v, 0)
		if d.Outcome != want.Outcome || d.FirstRelevantRank != want.FirstRelevantRank || d.ReciprocalRank != want.ReciprocalRank ||
			math.Abs(d.NDCG-want.NDCG) > 1e-12 || d.Precision != want.Precision {
			t.Fatalf("%v: got %+v, definitions give %+v (CP %v)", v, d, want, cp.Value)
		}
	}
	for n := 1; n <= 12; n++ {
		for mask := 0; mask < 1<<n; mask++ {
			v := make([]bool, n)
			for i := range v {
				v[i] = mask&(1<<i) != 0
			}
			check(v)
		}
	}
	for _, n := range []int{127, 128, 129, 300, 1000} {
		v := make([]bool, n)
		for i := range v {
			v[i] = i%3 == 2 || i == n-1
		}
		check(v)
	}
}

func TestRankLabel(t *testing.T) {
	for rank, want := range map[int]string{1: "1", 2: "2", 10: "10", 11: "11+", 12: "11+", 1000: "11+", 0: "1"} {
		if got := RankLabel(rank); got != want {
			t.Errorf("rank %d: %q, want %q", rank, got, want)
		}
	}
	if len(RankLabels) != 11 || RankLabels[10] != "11+" {
		t.Errorf("RankLabels %v", RankLabels)
	}
}

func TestDiagnoseDoesNotAllocate(t *testing.T) {
	v := bools(0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1)
	if n := testing.AllocsPerRun(100, func() {
		d, _ := Diagnose(v, 0)
		_ = RankLabel(d.FirstRelevantRank)
	}); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}

// Next to BenchmarkContextualPrecision, on the same verdicts.
func BenchmarkDiagnose(b *testing.B) {
	v := bools(1, 0, 1, 1, 0, 0, 1, 0, 0, 1)
	for b.Loop() {
		Diagnose(v, 0)
	}
}

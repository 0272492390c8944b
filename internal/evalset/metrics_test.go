package evalset

import (
	"math"
	"testing"
)

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// TestCohenKappaWorkedExample is the textbook example (Wikipedia, "Cohen's
// kappa"): 50 grant proposals, both readers say yes to 20 and no to 15, A
// alone says yes to 5, B alone to 10. po = 35/50 = 0.7; A says yes half the
// time and B 60% of the time, so pe = 0.5·0.6 + 0.5·0.4 = 0.5, and
// kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
func TestCohenKappaWorkedExample(t *testing.T) {
	near(t, "kappa", CohenKappa(20, 5, 10, 15), 0.4)
	// Kappa is symmetric in the raters: swapping them swaps fp and fn.
	near(t, "kappa, raters swapped", CohenKappa(20, 10, 5, 15), 0.4)
}

func TestCohenKappaEdges(t *testing.T) {
	near(t, "perfect agreement", CohenKappa(3, 0, 0, 7), 1)
	// Always disagreeing on a balanced set: po = 0, pe = 0.5 → -1.
	near(t, "perfect disagreement", CohenKappa(0, 5, 5, 0), -1)
	// Agreement no better than chance: both say yes half the time,
	// independently: po = pe = 0.5.
	near(t, "chance", CohenKappa(25, 25, 25, 25), 0)
	// A judge that says yes to everything agrees with the labels exactly as
	// often as chance predicts: kappa 0, however high its recall.
	near(t, "always yes", CohenKappa(20, 80, 0, 0), 0)
	for _, c := range [][4]int{{0, 0, 0, 0}, {10, 0, 0, 0}, {0, 0, 0, 10}} {
		if k := CohenKappa(c[0], c[1], c[2], c[3]); !math.IsNaN(k) {
			t.Errorf("CohenKappa%v = %v, want NaN (undefined)", c, k)
		}
	}
}

func TestTally(t *testing.T) {
	var tl Tally
	// Labels [1 0 1] (CP 5/6) judged [1 0 0] (CP 1); labels [0 1] (CP 1/2)
	// judged [1 0] (CP 1).
	if err := tl.Add([]bool{true, false, false}, []bool{true, false, true}); err != nil {
		t.Fatal(err)
	}
	if err := tl.Add([]bool{true, false}, []bool{false, true}); err != nil {
		t.Fatal(err)
	}
	if err := tl.Add([]bool{true}, []bool{true, false}); err == nil {
		t.Error("verdicts and labels of different lengths accepted")
	}
	m := tl.Metrics()
	if m.Retrievals != 2 || m.Chunks != 5 || m.TP != 1 || m.FP != 1 || m.FN != 2 || m.TN != 1 {
		t.Fatalf("counts %+v", m)
	}
	near(t, "precision", m.Precision, 0.5)
	near(t, "recall", m.Recall, 1.0/3)
	near(t, "F1", m.F1, 0.4)
	near(t, "accuracy", m.Accuracy, 0.4)
	near(t, "kappa", m.Kappa, CohenKappa(1, 1, 2, 1))
	near(t, "CP MAE", m.CPMAE, (1.0/6+0.5)/2)
	near(t, "mean judged CP", m.MeanJudgedCP, 1)
	near(t, "mean true CP", m.MeanTrueCP, (5.0/6+0.5)/2)

	var empty Tally
	if m := empty.Metrics(); m.F1 != 0 || m.CPMAE != 0 || !math.IsNaN(m.Kappa) {
		t.Errorf("empty tally: %+v", m)
	}
}

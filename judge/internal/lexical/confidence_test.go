package lexical_test

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ragprecision/ragprecision/internal/hotpotqa"
	"github.com/ragprecision/ragprecision/judge/internal/lexical"
)

// The tests here measure whether Verdict.Confidence is informative, on the
// HotpotQA sample (HotpotQA (Yang et al., 2018), CC BY-SA 4.0, IRCoT dev
// subsample), and the judge on single-chunk retrievals, where its relative
// rule has nothing to compare with. The report behind docs/JUDGES.md's figures:
//
//	LEXICAL_REPORT=1 go test -run ConfidenceReport -v ./judge/internal/lexical/

// retrieval is one judged retrieval with its human verdicts.
type retrieval struct {
	query, reference string
	chunks           []string
	truth            []bool
}

// outcome is one verdict and whether it is right.
type outcome struct {
	relevant, truth bool
	confidence      float64
}

func judgeAll(rs []retrieval) []outcome {
	var out []outcome
	for _, r := range rs {
		for i, v := range lexical.Judge(r.query, r.reference, r.chunks) {
			out = append(out, outcome{v.Relevant, r.truth[i], v.Confidence})
		}
	}
	return out
}

// wholeRetrievals is every question of qs as retrieved: all its chunks.
func wholeRetrievals(qs []hotpotqa.Question, titles bool) []retrieval {
	rs := make([]retrieval, len(qs))
	for i, q := range qs {
		rs[i] = retrieval{q.Text, q.Answer, q.Chunks(titles), q.Truth()}
	}
	return rs
}

// firstChunks is every question with only its first k chunks (as many
// supporting ones as happen to be among them).
func firstChunks(qs []hotpotqa.Question, titles bool, k int) []retrieval {
	rs := wholeRetrievals(qs, titles)
	for i := range rs {
		n := min(k, len(rs[i].chunks))
		rs[i].chunks, rs[i].truth = rs[i].chunks[:n], rs[i].truth[:n]
	}
	return rs
}

// distractorsOnly is every question with its non-supporting chunks alone:
// on-topic text that does not answer it, where every relevant verdict is
// wrong.
func distractorsOnly(qs []hotpotqa.Question, titles bool) []retrieval {
	var rs []retrieval
	for _, r := range wholeRetrievals(qs, titles) {
		d := retrieval{query: r.query, reference: r.reference}
		for i, c := range r.chunks {
			if !r.truth[i] {
				d.chunks, d.truth = append(d.chunks, c), append(d.truth, false)
			}
		}
		rs = append(rs, d)
	}
	return rs
}

// singleChunks is every question with one chunk: the i-th question of qs
// (in file order) gets a supporting chunk when i is even, alternately its
// first and second, and a non-supporting one when i is odd, cycling through
// its distractors. Every question has two supporting chunks, so about half
// of the chunks are relevant; a question at an odd place with no distractor
// (3 of the 500 in the whole sample) is left out.
func singleChunks(qs []hotpotqa.Question, titles bool) []retrieval {
	var rs []retrieval
	for i, q := range qs {
		chunks, truth := q.Chunks(titles), q.Truth()
		var supporting, distractors []int
		for k, t := range truth {
			if t {
				supporting = append(supporting, k)
			} else {
				distractors = append(distractors, k)
			}
		}
		var pick int
		switch {
		case i%2 == 0:
			pick = supporting[(i/2)%len(supporting)]
		case len(distractors) == 0:
			continue
		default:
			pick = distractors[(i/2)%len(distractors)]
		}
		rs = append(rs, retrieval{q.Text, q.Answer, chunks[pick : pick+1], truth[pick : pick+1]})
	}
	return rs
}

// agreement is the verdicts' agreement with the human ones.
type agreement struct {
	n, tp, fp, fn, tn                 int
	precision, recall, f1, acc, kappa float64
}

func agree(os []outcome) agreement {
	var a agreement
	for _, o := range os {
		switch {
		case o.relevant && o.truth:
			a.tp++
		case o.relevant:
			a.fp++
		case o.truth:
			a.fn++
		default:
			a.tn++
		}
	}
	a.n = len(os)
	n := float64(a.n)
	ratio := func(x, y int) float64 {
		if y == 0 {
			return 0
		}
		return float64(x) / float64(y)
	}
	a.precision, a.recall = ratio(a.tp, a.tp+a.fp), ratio(a.tp, a.tp+a.fn)
	if a.precision+a.recall > 0 {
		a.f1 = 2 * a.precision * a.recall / (a.precision + a.recall)
	}
	a.acc = ratio(a.tp+a.tn, a.n)
	// Cohen's kappa: agreement beyond what the two marginals give by chance.
	chance := (float64(a.tp+a.fp)*float64(a.tp+a.fn) + float64(a.fn+a.tn)*float64(a.fp+a.tn)) / (n * n)
	if chance < 1 {
		a.kappa = (a.acc - chance) / (1 - chance)
	}
	return a
}

func (a agreement) String() string {
	return fmt.Sprintf("n %d  P %.3f  R %.3f  F1 %.3f  accuracy %.3f  kappa %.3f  (judged relevant %.0f%%, truly %.0f%%)",
		a.n, a.precision, a.recall, a.f1, a.acc, a.kappa,
		100*float64(a.tp+a.fp)/float64(a.n), 100*float64(a.tp+a.fn)/float64(a.n))
}

// accuracy is the share of right verdicts, NaN for none.
func accuracy(os []outcome) float64 {
	right := 0
	for _, o := range os {
		if o.relevant == o.truth {
			right++
		}
	}
	return float64(right) / float64(len(os))
}

// auc is the probability that a right verdict has a higher confidence than a
// wrong one (ties count half): 0.5 is an uninformative confidence.
func auc(os []outcome) float64 {
	sorted := slices.SortedFunc(slices.Values(os), func(a, b outcome) int { return cmp.Compare(a.confidence, b.confidence) })
	var right, wrong, rankSum float64
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].confidence == sorted[i].confidence {
			j++
		}
		rank := float64(i+j+1) / 2 // mean 1-based rank of the tie group
		for _, o := range sorted[i:j] {
			if o.relevant == o.truth {
				right++
				rankSum += rank
			} else {
				wrong++
			}
		}
		i = j
	}
	if right == 0 || wrong == 0 {
		return math.NaN()
	}
	return (rankSum - right*(right+1)/2) / (right * wrong)
}

// above returns the outcomes with a confidence of at least c, and the rest.
func above(os []outcome, c float64) (sure, unsure []outcome) {
	for _, o := range os {
		if o.confidence >= c {
			sure = append(sure, o)
		} else {
			unsure = append(unsure, o)
		}
	}
	return sure, unsure
}

var cutOffs = []float64{0.25, 0.5, 0.75, 0.9}

// confidenceTable reports accuracy by confidence decile and above each
// cut-off.
func confidenceTable(os []outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %d verdicts, accuracy %.3f, confidence AUC %.3f\n", len(os), accuracy(os), auc(os))
	fmt.Fprintf(&b, "  %-11s %6s %7s %9s\n", "confidence", "n", "share", "accuracy")
	for d := range 10 {
		lo, hi := float64(d)/10, float64(d+1)/10
		var in []outcome
		for _, o := range os {
			if o.confidence >= lo && (o.confidence < hi || d == 9) {
				in = append(in, o)
			}
		}
		if len(in) > 0 {
			fmt.Fprintf(&b, "  [%.1f, %.1f%s %6d %6.1f%% %9.3f\n", lo, hi, map[bool]string{true: "]", false: ")"}[d == 9],
				len(in), 100*float64(len(in))/float64(len(os)), accuracy(in))
		}
	}
	for _, c := range cutOffs {
		sure, unsure := above(os, c)
		fmt.Fprintf(&b, "  confidence >= %.2f: %5.1f%% of verdicts, accuracy %.3f; the rest %.3f\n",
			c, 100*float64(len(sure))/float64(len(os)), accuracy(sure), accuracy(unsure))
	}
	return b.String()
}

// meanConfidence is the mean confidence of the verdicts judged relevant
// (and of the rest).
func meanConfidence(os []outcome) (relevant, irrelevant float64) {
	var nr, ni int
	for _, o := range os {
		if o.relevant {
			relevant += o.confidence
			nr++
		} else {
			irrelevant += o.confidence
			ni++
		}
	}
	return relevant / float64(max(nr, 1)), irrelevant / float64(max(ni, 1))
}

func TestConfidenceReport(t *testing.T) {
	if os.Getenv("LEXICAL_REPORT") == "" {
		t.Skip("set LEXICAL_REPORT=1 to run")
	}
	all := loadHotpotQA(t)
	t.Logf("data: %s", hotpotqa.Attribution)
	for _, split := range []hotpotqa.Split{hotpotqa.HeldOut, hotpotqa.Tune, hotpotqa.All} {
		qs := hotpotqa.Select(all, split)
		for _, titles := range []bool{false, true} {
			variant := map[bool]string{false: "paragraph", true: "title: paragraph"}[titles]
			whole := judgeAll(wholeRetrievals(qs, titles))
			t.Logf("%s, %s, whole retrievals (%d questions): %s\n%s", split, variant, len(qs), agree(whole), confidenceTable(whole))
			first3 := judgeAll(firstChunks(qs, titles, 3))
			t.Logf("%s, %s, first 3 chunks: %s\n%s", split, variant, agree(first3), confidenceTable(first3))
			single := judgeAll(singleChunks(qs, titles))
			rel, irr := meanConfidence(single)
			t.Logf("%s, %s, single chunks: %s\n  mean confidence: judged relevant %.3f, judged irrelevant %.3f\n%s",
				split, variant, agree(single), rel, irr, confidenceTable(single))
			distractors := judgeAll(distractorsOnly(qs, titles))
			rel, _ = meanConfidence(distractors)
			t.Logf("%s, %s, distractors only: %s\n  mean confidence of the (wrong) relevant verdicts %.3f\n%s",
				split, variant, agree(distractors), rel, confidenceTable(distractors))
		}
	}
}

// TestConfidenceInformative guards what the report shows on the held-out
// half: a confident verdict is more often right, and a single-chunk
// retrieval, which the relative rule cannot judge, yields no confident
// relevant verdict.
func TestConfidenceInformative(t *testing.T) {
	all := loadHotpotQA(t)
	qs := hotpotqa.Select(all, hotpotqa.HeldOut)
	for _, titles := range []bool{false, true} {
		whole := judgeAll(wholeRetrievals(qs, titles))
		if a := auc(whole); a < 0.8 {
			t.Errorf("titles %v: confidence AUC %.3f on whole retrievals, want >= 0.8", titles, a)
		}
		sure, unsure := above(whole, 0.5)
		if accuracy(sure) < 0.95 || accuracy(sure) < accuracy(unsure)+0.1 {
			t.Errorf("titles %v: accuracy %.3f at confidence >= 0.5, %.3f below; want >= 0.95 and 0.1 more",
				titles, accuracy(sure), accuracy(unsure))
		}
		single := judgeAll(singleChunks(qs, titles))
		if rel, _ := meanConfidence(single); rel > 0.05 {
			t.Errorf("titles %v: single chunks judged relevant with mean confidence %.3f, want <= 0.05", titles, rel)
		}
	}
}

// TestConfidenceTuning is how the confidence's scales were chosen, run on
// demand with LEXICAL_TUNE=1 go test -run ConfidenceTuning -v: for each
// combination on a grid it reports the confidence's AUC on the tuning half
// (both chunk variants) for whole, 5-chunk, 3-chunk and single-chunk
// retrievals, and their mean, best first. It never looks at the held-out
// half.
func TestConfidenceTuning(t *testing.T) {
	if os.Getenv("LEXICAL_TUNE") == "" {
		t.Skip("set LEXICAL_TUNE=1 to run")
	}
	qs := hotpotqa.Select(loadHotpotQA(t), hotpotqa.Tune)
	sets := []struct {
		name string
		of   func(titles bool) []retrieval
	}{
		{"whole", func(titles bool) []retrieval { return wholeRetrievals(qs, titles) }},
		{"first 5", func(titles bool) []retrieval { return firstChunks(qs, titles, 5) }},
		{"first 3", func(titles bool) []retrieval { return firstChunks(qs, titles, 3) }},
		{"single", func(titles bool) []retrieval { return singleChunks(qs, titles) }},
	}
	type result struct {
		scales [3]float64
		aucs   []float64
		mean   float64
	}
	var results []result
	for _, relative := range []float64{0.25, 0.5, 1} {
		for _, contrast := range []float64{0.1, 0.25, 0.5, 1} {
			for _, absent := range []float64{0.25, 0.5, 1} {
				r := result{scales: [3]float64{relative, contrast, absent}}
				for _, set := range sets {
					var os []outcome
					for _, titles := range []bool{false, true} {
						for _, rt := range set.of(titles) {
							vs, confs := lexical.ConfidencesWithScales(rt.query, rt.reference, rt.chunks, relative, contrast, absent)
							for i, v := range vs {
								os = append(os, outcome{v.Relevant, rt.truth[i], confs[i]})
							}
						}
					}
					r.aucs = append(r.aucs, auc(os))
					r.mean += auc(os) / float64(len(sets))
				}
				results = append(results, r)
			}
		}
	}
	slices.SortStableFunc(results, func(a, b result) int { return cmp.Compare(b.mean, a.mean) })
	t.Logf("relative contrast absent   mean AUC  (%s)", "whole, first 5, first 3, single")
	for _, r := range results {
		mark := ""
		if r.scales == lexical.DefaultConfidenceScales {
			mark = "  <- default"
		}
		t.Logf("%8.2f %8.2f %6.2f   %.4f  %.3f%s", r.scales[0], r.scales[1], r.scales[2], r.mean, r.aucs, mark)
	}
}

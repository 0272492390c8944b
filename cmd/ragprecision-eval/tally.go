package main

import (
	"fmt"
	"time"

	"github.com/ragprecision/ragprecision/internal/evalset"
	"github.com/ragprecision/ragprecision/judge"
)

// maxTypes bounds the distinct retrieval types -by-type reports; later
// types are counted together under otherTypes, so that a set whose every
// line has a type of its own still runs in constant memory.
const maxTypes = 20

const otherTypes = "(other types)"

// group is one row of the report: a split, and a type or every type ("").
type group struct {
	split evalset.Split
	typ   string
}

// judgeTally is everything measured about one candidate.
type judgeTally struct {
	groups map[group]*evalset.Tally

	retrievals, failed int
	chunks             int // of the retrievals judged
	took               time.Duration
	firstErr           error

	// stages counts verdicts by deciding stage (judge.Verdict.Stage: in a
	// cascade, builtin:lexical or the LLM); "" (a chunk decided without a
	// judge, such as an empty one) is not counted.
	stages     map[string]int
	stageOrder []string
}

// tally gathers the results of all candidates as retrievals are consumed.
type tally struct {
	splits []evalset.Split // reported; All first when present
	byType bool
	// recorded: the labels are the verdicts recorded on traced spans
	// (-traces), and a retrieval's type its data source.
	recorded bool
	// compared: the verdicts were not judged here but read from a second
	// recording (-against), so there is no cost to report.
	compared bool

	types  []string // in order of first appearance, at most maxTypes
	known  map[string]bool
	judges []*judgeTally
}

func newTally(n int, splits []evalset.Split, byType bool) *tally {
	t := &tally{splits: splits, byType: byType, known: map[string]bool{}}
	for range n {
		t.judges = append(t.judges, &judgeTally{groups: map[group]*evalset.Tally{}, stages: map[string]int{}})
	}
	return t
}

// rowLabel is how the report names group g: its split, and its type
// when it has one; a recording's rows are its data sources, and "all".
func (t *tally) rowLabel(g group) string {
	switch {
	case t.recorded && g.typ == "":
		return string(g.split)
	case t.recorded && g.typ == otherTypes:
		return "(other data sources)"
	case t.recorded:
		return g.typ
	case g.typ != "":
		return string(g.split) + " " + g.typ
	}
	return string(g.split)
}

// typeOf is the type r is reported under with -by-type.
func (t *tally) typeOf(r evalset.Retrieval) string {
	typ := r.Type
	if typ == "" {
		typ = "(no type)"
	}
	if !t.known[typ] {
		if len(t.types) >= maxTypes {
			return otherTypes
		}
		t.known[typ] = true
		t.types = append(t.types, typ)
	}
	return typ
}

// add records one judged retrieval. A judge that returns a verdict count
// other than the chunk count is broken, and stops the run.
func (t *tally) add(j judged) error {
	labels := j.r.Labels()
	half := j.r.HalfOf()
	typ := ""
	if t.byType {
		typ = t.typeOf(j.r)
	}
	for i, a := range j.answers {
		jt := t.judges[i]
		jt.retrievals++
		jt.took += a.took
		if a.err != nil {
			jt.failed++
			if jt.firstErr == nil {
				jt.firstErr = fmt.Errorf("retrieval %s: %w", j.r.ID, a.err)
			}
			continue
		}
		verdicts := relevance(a.res.Verdicts)
		if len(verdicts) != len(labels) {
			return fmt.Errorf("judge %d returned %d verdicts for the %d chunks of retrieval %s", i+1, len(verdicts), len(labels), j.r.ID)
		}
		jt.chunks += len(labels)
		for _, s := range t.splits {
			if !s.Contains(half) {
				continue
			}
			_ = jt.group(group{s, ""}).Add(verdicts, labels) // lengths checked above
			if t.byType {
				_ = jt.group(group{s, typ}).Add(verdicts, labels)
			}
		}
		for _, v := range a.res.Verdicts {
			if st := v.Stage; st != "" {
				if jt.stages[st] == 0 {
					jt.stageOrder = append(jt.stageOrder, st)
				}
				jt.stages[st]++
			}
		}
	}
	return nil
}

func (jt *judgeTally) group(g group) *evalset.Tally {
	tl, ok := jt.groups[g]
	if !ok {
		tl = &evalset.Tally{}
		jt.groups[g] = tl
	}
	return tl
}

// metrics returns the metrics of one group (zero when nothing was added).
func (jt *judgeTally) metrics(g group) evalset.Metrics {
	if tl, ok := jt.groups[g]; ok {
		return tl.Metrics()
	}
	return (&evalset.Tally{}).Metrics()
}

func relevance(vs []judge.Verdict) []bool {
	out := make([]bool, len(vs))
	for i, v := range vs {
		out[i] = v.Relevant
	}
	return out
}

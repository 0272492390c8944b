package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ragprecision/ragprecision/internal/recording"
)

// maxJudges bounds the distinct recorded judges the report lists.
const maxJudges = 10

// recordingStats is what reading a recording found, for the report.
type recordingStats struct {
	files []string
	lines int
	// badLines are lines that are not OTLP JSON traces, firstBad the first.
	badLines int
	firstBad error
	spans    int
	// notSelected are retrieval spans the processor did not select.
	notSelected int
	// unscored counts the spans selected but not scored, by status.
	unscored map[string]int
	scored   int
	// skipped counts the scored spans not compared, by reason.
	skipped map[string]int
	// judges counts the scored spans by recorded judge and judge_version.
	judges map[recordedJudge]int
}

type recordedJudge struct{ model, version string }

func newRecordingStats(files []string) *recordingStats {
	return &recordingStats{files: files, unscored: map[string]int{}, skipped: map[string]int{}, judges: map[recordedJudge]int{}}
}

// line counts a line read, or the error of one that is not OTLP JSON; any
// other error stops the reading.
func (st *recordingStats) line(err error) error {
	var le *recording.LineError
	switch {
	case err == nil:
		st.lines++
	case errors.As(err, &le):
		st.badLines++
		if st.firstBad == nil {
			st.firstBad = err
		}
	default:
		return err
	}
	return nil
}

func (st *recordingStats) judge(r recording.Result) {
	j := recordedJudge{r.Judge, r.JudgeVersion}
	if _, ok := st.judges[j]; ok || len(st.judges) < maxJudges {
		st.judges[j]++
	}
}

// describeRecording says what the recording holds and what became of its
// spans: how many were judged again and why the others were not.
func describeRecording(w io.Writer, st *recordingStats, judged int) {
	fmt.Fprintf(w, "\nRecording: %d lines, %d spans", st.lines, st.spans)
	if st.badLines > 0 {
		fmt.Fprintf(w, "; %d lines are not OTLP JSON traces and were left out (first: %v)", st.badLines, st.firstBad)
	}
	unscored := 0
	for _, n := range st.unscored {
		unscored += n
	}
	fmt.Fprintf(w, "\nRetrieval spans: %d not selected when recorded, %d selected but not scored", st.notSelected, unscored)
	if unscored > 0 {
		fmt.Fprintf(w, " (%s)", countList(st.unscored))
	}
	fmt.Fprintf(w, ", %d scored; %d of them compared", st.scored, judged)
	skipped := 0
	for _, n := range st.skipped {
		skipped += n
	}
	if skipped == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, ", %d skipped:\n", skipped)
	for _, kv := range sortedCounts(st.skipped) {
		fmt.Fprintf(w, "  %6d  %s\n", kv.n, kv.key)
	}
}

// recordedJudges lists the judges the recorded verdicts came from.
func recordedJudges(st *recordingStats) string {
	type jn struct {
		j recordedJudge
		n int
	}
	var list []jn
	for j, n := range st.judges {
		list = append(list, jn{j, n})
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].n != list[b].n {
			return list[a].n > list[b].n
		}
		return list[a].j.model+list[a].j.version < list[b].j.model+list[b].j.version
	})
	var parts []string
	for _, e := range list {
		v := e.j.version
		if v == "" {
			v = "none recorded"
		}
		parts = append(parts, fmt.Sprintf("%d by %s (judge_version %s)", e.n, e.j.model, v))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type keyCount struct {
	key string
	n   int
}

// sortedCounts orders counts by count, most first, then by key.
func sortedCounts(m map[string]int) []keyCount {
	var out []keyCount
	for k, n := range m {
		out = append(out, keyCount{k, n})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].n != out[b].n {
			return out[a].n > out[b].n
		}
		return out[a].key < out[b].key
	})
	return out
}

// countList is "no_reference 3, budget 1".
func countList(m map[string]int) string {
	var parts []string
	for _, kv := range sortedCounts(m) {
		parts = append(parts, fmt.Sprintf("%s %d", kv.key, kv.n))
	}
	return strings.Join(parts, ", ")
}

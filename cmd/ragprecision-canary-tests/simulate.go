package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
)

const day = 24 * 60 / stepMinutes

// draw is a canary file of the given size and a judge's counters over
// steps, from seed.
func draw(seed uint64, fileSize int, j judgeModel, steps int) canaryCounters {
	rng := rand.New(rand.NewPCG(seed, 0x63616e617279))
	return simulate(rng, newCanaryFile(rng, fileSize), j, steps)
}

// simulateFortnights replays n fortnights of the canary per case (one seed
// each) and prints how often RAGJudgeDrifted fires for a steady judge, and
// how soon after a change for judges that change on day 8, for several
// smallest drops and canary file sizes.
func simulateFortnights(w io.Writer, n int) {
	const steps, changeAt = 14 * day, 8 * day
	drops := []float64{0, 0.02, 0.03, 0.04, 0.05, 0.08}
	fmt.Fprintf(w, "RAGJudgeDrifted replayed over %d fortnights per case (%d retrievals of %d chunks an hour, window 6h, baseline the week before, for: 1h)\n",
		n, retrievalsPerRun, chunksPerRetrieval)
	for _, size := range []int{50, 200, 1000} {
		fmt.Fprintf(w, "\ncanary file of %d retrievals:\n", size)
		for _, d := range drops {
			fired := 0
			for i := range n {
				if replay(draw(uint64(7000+i), size, steadyJudge, steps), steps, d).firstFiring >= 0 {
					fired++
				}
			}
			fmt.Fprintf(w, "  smallest drop %.2f: a steady judge fired in %5.1f%% of fortnights", d, 100*float64(fired)/float64(n))
			for _, c := range []struct {
				name string
				j    judgeModel
			}{
				{"random", judgeModel{changeAt: changeAt * stepMinutes, random: true}},
				{"15% lenient", judgeModel{changeAt: changeAt * stepMinutes, lenient: 0.15}},
				{"7.5% lenient", judgeModel{changeAt: changeAt * stepMinutes, lenient: 0.075}},
			} {
				var delays []int
				for i := range n {
					first := replay(draw(uint64(9000+i), size, c.j, steps), steps, d).firstFiringFrom(changeAt)
					if first >= 0 {
						delays = append(delays, (first-changeAt)*stepMinutes)
					}
				}
				fmt.Fprintf(w, "; %s: %3.0f%% fired", c.name, 100*float64(len(delays))/float64(n))
				if len(delays) > 0 {
					slices.Sort(delays)
					fmt.Fprintf(w, " after %s (median)", minutes(delays[len(delays)/2]))
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// minutes writes a minute count as a promtool duration: 90 → "1h30m",
// 2975 → "2d1h35m".
func minutes(m int) string {
	var b strings.Builder
	for _, u := range []struct {
		unit    string
		minutes int
	}{{"d", 24 * 60}, {"h", 60}, {"m", 1}} {
		if m >= u.minutes {
			fmt.Fprintf(&b, "%d%s", m/u.minutes, u.unit)
			m %= u.minutes
		}
	}
	if b.Len() == 0 {
		return "0m"
	}
	return b.String()
}

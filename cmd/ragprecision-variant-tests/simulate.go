package main

import (
	"fmt"
	"io"
	"slices"
)

// simulateDays replays days of each scenario, one seed a day, for several
// for: durations, and prints how often RAGVariantRegressed fires and when.
func simulateDays(w io.Writer, days int) error {
	fors := []int{15, 30, forMinutes, 120}
	fmt.Fprintf(w, "RAGVariantRegressed replayed over %d days per scenario (one seed a day, %d scored retrievals a minute per variant, %.0f%%-%.0f%% over the day)\n",
		days, int(dayTraffic.perMinute), 100*(1-dayTraffic.swing), 100*(1+dayTraffic.swing))
	for _, s := range []scenario{equalVariants, worseVariant} {
		var means [2]float64
		fired := make([][2]int, len(fors))
		first := make([][]int, len(fors))
		for d := range days {
			variants := s.draw(uint64(1000 + d))
			for i := range means {
				means[i] += variants[i].sum[day] / variants[i].count[day] / float64(days)
			}
			for f, forMin := range fors {
				tl := replay(variants, day, forMin)
				for i := range 2 {
					if tl.firstFiring[i] >= 0 {
						fired[f][i]++
					}
				}
				if tl.firstFiring[1] >= 0 {
					first[f] = append(first[f], tl.firstFiring[1])
				}
			}
		}
		fmt.Fprintf(w, "\n%s: mean CP v1 %.3f, v2 %.3f\n", s.name, means[0], means[1])
		for f, forMin := range fors {
			fmt.Fprintf(w, "  for: %3dm  days it fired for v1 %5.1f%%, for v2 %5.1f%%", forMin,
				100*float64(fired[f][0])/float64(days), 100*float64(fired[f][1])/float64(days))
			if len(first[f]) > 0 {
				slices.Sort(first[f])
				fmt.Fprintf(w, "; v2 first fired after %s (median), %s (90th percentile)",
					minutes(first[f][len(first[f])/2]), minutes(first[f][len(first[f])*9/10]))
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

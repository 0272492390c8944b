package main

import (
	"fmt"
	"io"
	"math"
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
		fired := make([][3]int, len(fors)) // v1, v2, either
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
				if tl.firstFiring[0] >= 0 || tl.firstFiring[1] >= 0 {
					fired[f][2]++
				}
				if tl.firstFiring[1] >= 0 {
					first[f] = append(first[f], tl.firstFiring[1])
				}
			}
		}
		fmt.Fprintf(w, "\n%s: mean CP v1 %.3f, v2 %.3f\n", s.name, means[0], means[1])
		for f, forMin := range fors {
			fmt.Fprintf(w, "  for: %3dm  days it fired for v1 %5.1f%%, for v2 %5.1f%%, for either %5.1f%%", forMin,
				100*float64(fired[f][0])/float64(days), 100*float64(fired[f][1])/float64(days), 100*float64(fired[f][2])/float64(days))
			if len(first[f]) > 0 {
				slices.Sort(first[f])
				fmt.Fprintf(w, "; v2 first fired after %s (median), %s (90th percentile)",
					minutes(first[f][len(first[f])/2]), minutes(first[f][len(first[f])*9/10]))
			}
			fmt.Fprintln(w)
		}
	}
	detectionAtConstantTraffic(w, days)
	return nil
}

// detectionAtConstantTraffic replays the worse ranking against the baseline
// at constant traffic, at rates chosen so that an hour's expected gap is
// mu standard errors of the difference (mu = Δ / (sd · sqrt(2/n))), and
// prints how soon the alert fires.
func detectionAtConstantTraffic(w io.Writer, days int) {
	sd, delta := spreadAndGap()
	fmt.Fprintf(w, "\nworse ranking at constant traffic (sd %.3f, gap %.3f), for: %dm:\n", sd, delta, forMinutes)
	for _, mu := range []float64{2, 3, 4, 5} {
		perHour := 2 * math.Pow(mu*sd/delta, 2)
		s := scenario{variants: []variantModel{
			{"v1", baseline, traffic{perMinute: perHour / 60}}, {"v2", worseRanking, traffic{perMinute: perHour / 60}},
		}}
		var first []int
		within := map[int]int{2 * 60: 0, 4 * 60: 0, 8 * 60: 0}
		for d := range days {
			tl := replay(s.draw(uint64(9000+d)), day, forMinutes)
			if tl.firstFiring[1] < 0 {
				first = append(first, math.MaxInt)
				continue
			}
			first = append(first, tl.firstFiring[1])
			for h := range within {
				if tl.firstFiring[1] <= h {
					within[h]++
				}
			}
		}
		slices.Sort(first)
		median := "never"
		if m := first[len(first)/2]; m != math.MaxInt {
			median = minutes(m)
		}
		fmt.Fprintf(w, "  mu %.0f (%4.0f scores an hour per variant): fired within 2h on %5.1f%% of days, 4h %5.1f%%, 8h %5.1f%%; median %s\n",
			mu, perHour, 100*float64(within[120])/float64(days), 100*float64(within[240])/float64(days), 100*float64(within[480])/float64(days), median)
	}
}

// spreadAndGap measures the baseline's standard deviation of CP and the
// worse ranking's gap to it on a large draw.
func spreadAndGap() (sd, delta float64) {
	s := scenario{variants: []variantModel{{"v1", baseline, traffic{perMinute: 100}}, {"v2", worseRanking, traffic{perMinute: 100}}}}
	c := s.draw(1)
	n := c[0].count[day]
	mean := c[0].sum[day] / n
	sd = math.Sqrt((c[0].squares[day]/n - mean*mean) * n / (n - 1))
	return sd, mean - c[1].sum[day]/c[1].count[day]
}

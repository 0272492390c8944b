package main

import "math/rand/v2"

// The noise model of both scenarios: 85% of queries have an answer in the
// corpus; five chunks, relevant by rank with falling probability; 4 scored
// retrievals a minute per variant on average, 2 at night and 6 at the peak.
var (
	baseline = retriever{answerable: 0.85, relevance: []float64{0.6, 0.45, 0.35, 0.25, 0.2}}
	// worseRanking finds as many relevant chunks, and ranks fewer of them first.
	worseRanking = retriever{answerable: 0.85, relevance: []float64{0.45, 0.45, 0.4, 0.3, 0.25}}
	dayTraffic   = traffic{perMinute: 4, swing: 0.5}
)

const day = 24 * 60

type variantModel struct {
	name string
	retriever
	traffic
}

// scenario is one data source's variants; the test file holds each
// scenario under its data source.
type scenario struct {
	name, dataSource string
	variants         []variantModel
	seed             uint64
}

var (
	equalVariants = scenario{name: "two equal variants", dataSource: "equal", seed: 1, variants: []variantModel{
		{"v1", baseline, dayTraffic}, {"v2", baseline, dayTraffic},
	}}
	worseVariant = scenario{name: "v2 ranks worse", dataSource: "worse", seed: 2, variants: []variantModel{
		{"v1", baseline, dayTraffic}, {"v2", worseRanking, dayTraffic},
	}}
)

// draw simulates a day of the scenario's variants from seed.
func (s scenario) draw(seed uint64) []counters {
	rng := rand.New(rand.NewPCG(seed, 0x76617269616e74))
	out := make([]counters, len(s.variants))
	for i, v := range s.variants {
		out[i] = simulate(rng, v.retriever, v.traffic, day)
	}
	return out
}

//go:build race

package ragprecisionprocessor

// raceEnabled is true in builds with the race detector, whose bookkeeping
// blurs memory measurements.
const raceEnabled = true

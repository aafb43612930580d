//go:build !race

package bench

// raceEnabled says the tests run with the race detector.
const raceEnabled = false

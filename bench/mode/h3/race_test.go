//go:build race

package h3_test

// raceEnabled: the race detector is on.
const raceEnabled = true

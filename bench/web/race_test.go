//go:build race

package web

// raceEnabled: the race detector is on.
const raceEnabled = true

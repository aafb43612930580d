//go:build race

package interop

// raceEnabled: the race detector is on.
const raceEnabled = true

//go:build race

package handshake

// raceEnabled says the tests run with the race detector.
const raceEnabled = true

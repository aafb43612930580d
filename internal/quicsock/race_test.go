//go:build race

package quicsock

const raceEnabled = true

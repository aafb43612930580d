//go:build !race

package quicsock

const raceEnabled = false

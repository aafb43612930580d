//go:build !race

package h3_test

const raceEnabled = false

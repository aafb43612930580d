//go:build linux

package bench

// The modes and drivers the runner has (package bench/mode/all).
import _ "kquic.dev/bench/mode/all"

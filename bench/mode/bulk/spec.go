// Package bulk is kqbench's default mode: the goodput of Streams streams
// one way (Cell.Direction), counted at the receiver over the measured
// window after a warm-up. Its spec (spec.go) builds on every platform: its
// checks, cells and keys, and its tables, CSV and explanation, are the
// defaults of packages bench/matrix and bench/render, which every mode of
// goodput-shaped cells builds on. Its measuring (measure_linux.go) is
// Linux's.
package bulk

import "kquic.dev/bench/matrix"

// Name is the mode's name (--mode bulk, the default; a spec records it as
// "").
const Name = matrix.Mode("bulk")

func init() {
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{Default: true, About: "goodput of streams in one direction"}); err != nil {
		panic(err)
	}
}

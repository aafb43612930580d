// Package streams is kqbench's objects-at-once mode (--mode streams):
// each sample sends Streams objects of the cell's size at once, client to
// server, and times each until the server has all of it, hash-checked.
// The QUIC transports carry each object on its own stream; TCP and kTLS
// carry them either multiplexed over one connection in frames taking
// turns, as HTTP/2's streams of equal weight do (Cell.Mux), so a lost
// segment holds every stream behind it (head-of-line blocking), or on a
// connection each (the second baseline). Its spec, results and tables
// build on every platform; its measuring (measure_linux.go) on Linux.
package streams

import (
	"fmt"

	"kquic.dev/bench/matrix"
)

// Name is the mode's name (--mode streams).
const Name = matrix.Mode("streams")

func init() {
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{
		About:    "completion time of each of --streams objects of each --sizes, sent at once; tcp and ktls also multiplexed over one connection",
		Notes:    map[string]string{"streams": "objects sent at once"},
		Validate: validate,
		Cells:    cells,
	}); err != nil {
		panic(err)
	}
}

// validate adds to the default checks that the objects go client to
// server.
func validate(s *matrix.Spec) []error {
	errs := s.DefaultChecks()
	for _, d := range s.Directions {
		if d != matrix.Up {
			errs = append(errs, fmt.Errorf("streams mode sends client to server: direction %q does not apply", d))
		}
	}
	return errs
}

// cells are the default cells, each TCP transport's also multiplexed over
// one connection (Cell.Mux) right after it.
func cells(s *matrix.Spec) []matrix.Cell {
	var out []matrix.Cell
	for _, c := range s.DefaultCells() {
		out = append(out, c)
		if Muxable(c.Transport) && c.Driver == "" {
			c.Mux = true
			out = append(out, c)
		}
	}
	return out
}

// Muxable reports whether the transport carries streams over TCP, where
// the mode also runs them multiplexed over one connection.
func Muxable(transport string) bool { return transport == "tcp" || transport == "ktls" }

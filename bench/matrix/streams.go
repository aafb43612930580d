package matrix

import "fmt"

// ModeStreams measures per-stream completion times: each sample sends
// Streams objects of Size bytes at once, client to server, and times each
// until the server has all of it, hash-checked. The QUIC transports carry
// each object on its own stream; TCP and kTLS carry them either
// multiplexed over one connection in frames, taking turns as HTTP/2's
// streams of equal weight do (Cell.Mux), so a lost segment holds every
// stream behind it (head-of-line blocking), or on a connection each (the
// second baseline).
const ModeStreams = Mode("streams")

func init() {
	if err := RegisterModeSpec(ModeStreams, ModeSpec{
		About:    "completion time of each of --streams objects of each --sizes, sent at once; tcp and ktls also multiplexed over one connection",
		Validate: (*Spec).validateStreams,
		Cells:    (*Spec).streamsCells,
	}); err != nil {
		panic(err)
	}
}

// validateStreams adds to the default checks that the objects go client to
// server.
func (s *Spec) validateStreams() []error {
	errs := s.DefaultChecks()
	for _, d := range s.Directions {
		if d != Up {
			errs = append(errs, fmt.Errorf("streams mode sends client to server: direction %q does not apply", d))
		}
	}
	return errs
}

// streamsCells are the default cells, each TCP transport's also
// multiplexed over one connection (Cell.Mux) right after it.
func (s *Spec) streamsCells() []Cell {
	var out []Cell
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
// streams mode also runs them multiplexed over one connection.
func Muxable(transport string) bool { return transport == "tcp" || transport == "ktls" }

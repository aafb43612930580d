// Package bulk is kqbench's default mode: the goodput of Streams streams
// one way (Cell.Direction), counted at the receiver over the measured
// window after a warm-up. Its spec (spec.go) builds on every platform: its
// checks, cells and keys, and its tables, CSV and explanation, are the
// defaults of packages bench/matrix and bench/render, which every mode of
// goodput-shaped cells builds on. Its measuring (measure_linux.go) is
// Linux's.
//
// With --conns (Spec.Conns) the connection count is an axis: a cell of n
// connections runs n connections side by side, each with the cell's
// streams, each pinned to CPUs of its own (matrix.Affinity.ForConns), and
// its samples carry the figures of package bench/mode/bulk/conns: each connection's
// goodput, Jain's fairness index, every CPU's time split by kind and the
// goodput per busy core; its tables add a scaling table (render.go).
//
// With --send (Spec.Send) the send method is an axis too: how the client's
// sender hands its messages to the kernel (package bench/send), a column
// each ("tcp+zerocopy"); send_render.go says what its counters saw.
package bulk

import (
	"fmt"
	"slices"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/send"
)

// Name is the mode's name (--mode bulk, the default; a spec records it as
// "").
const Name = matrix.Mode("bulk")

func init() {
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{
		Default: true, About: "goodput of streams in one direction",
		Validate: validate,
		Cells:    cells,
		Key:      key,
		Flags: []matrix.Flag{
			{Name: "conns", Default: "1", List: true, Usage: "connections side by side, each with --streams streams, each pinned to CPUs of its own as --affinity says (a list makes more cells and a scaling table)"},
			{Name: "send", Default: send.Write, List: true, Usage: "how the sender hands its messages to the kernel, an axis: " + strings.Join(send.Methods, ",") + " (write: the transport's own; sendfile: sendfile(2) from a memory file, tcp and ktls; zerocopy: MSG_ZEROCOPY with SO_ZEROCOPY, tcp; uring-zc: io_uring SEND_ZC); a transport without a method has its cells n/a with the reason"},
		},
		Apply: apply,
	}); err != nil {
		panic(err)
	}
}

// apply sets the connection counts when --conns is given and the send
// methods when --send names another than write (without them a spec
// records none, and its cells are what they always were).
func apply(s *matrix.Spec, f matrix.Flags) error {
	s.Conns, s.Send = nil, nil
	if f.Changed("send") {
		var ms []string
		for _, m := range f.List("send") {
			if m = strings.TrimSpace(m); m != "" && !slices.Contains(ms, m) {
				ms = append(ms, m)
			}
		}
		if !(len(ms) == 1 && ms[0] == send.Write) {
			s.Send = ms
		}
	}
	if !f.Changed("conns") {
		return nil
	}
	var err error
	s.Conns, err = matrix.ParseCounts(f.List("conns"), "--conns")
	return err
}

// validate is the default checks, the send methods' (each one of
// bench/send's, with an upward direction: the method is the client's), and
// the connection counts': each in range, and each one the affinity can
// pin.
func validate(s *matrix.Spec) []error {
	errs := s.DefaultChecks()
	for _, m := range s.Send {
		if err := send.Check(m); err != nil {
			errs = append(errs, err)
		}
	}
	if len(s.Send) > 0 && !slices.Contains(s.Directions, matrix.Up) {
		errs = append(errs, fmt.Errorf("--send %s: the send method is the client's, which sends up: add --direction up", strings.Join(s.Send, ",")))
	}
	seen := map[int]bool{}
	for _, n := range s.Conns {
		if n < 1 || n > matrix.MaxConns {
			errs = append(errs, fmt.Errorf("connections %d: must be 1..%d", n, matrix.MaxConns))
			continue
		}
		if seen[n] {
			errs = append(errs, fmt.Errorf("connections %d: given twice", n))
		}
		seen[n] = true
		if _, err := s.Affinity.ForConns(n); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// cells are the default cells, each once per connection count of the
// spec's (innermost, so that one transport's counts run together).
func cells(s *matrix.Spec) []matrix.Cell {
	out := s.DefaultCells()
	if len(s.Conns) == 0 {
		return out
	}
	var many []matrix.Cell
	for _, c := range out {
		for _, n := range s.Conns {
			c.Conns = n
			many = append(many, c)
		}
	}
	return many
}

// key is the default key, and the connection count where it is over one
// (a cell of one connection is the cell a run without --conns has).
func key(c matrix.Cell) string {
	k := matrix.DefaultKey(c)
	if c.Conns > 1 {
		k += fmt.Sprintf("/conns=%d", c.Conns)
	}
	return k
}

// ConnsOf is how many connections a cell runs: Conns, and one for a cell
// without.
func ConnsOf(c matrix.Cell) int { return max(c.Conns, 1) }

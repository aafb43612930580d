// Package rr is kqbench's request/response mode (msquic secnetperf's RPS
// test): Conns connections, each sending a ReqSize request and reading a
// response of the cell's size, one in flight; every round trip in the
// measured window goes into an HDR histogram (package bench/latency). Its
// spec, results and tables build on every platform; its measuring
// (measure_linux.go) and its server's half (remote_linux.go) on Linux.
package rr

import (
	"errors"
	"fmt"

	"kquic.dev/bench/matrix"
)

// Name is the mode's name (--mode rr).
const Name = matrix.Mode("rr")

// Direction is an rr cell's Direction: both ways, a request and its
// response.
const Direction = matrix.Direction(Name)

// The defaults of rr mode: a small request and a few-KiB response, as
// msquic's secnetperf measures requests per second (-up:512 -down:4000);
// the module's perf_test -d 1 sends 1 KiB each way.
const (
	DefaultRequest  = 512
	DefaultResponse = 4 << 10
)

func init() {
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{
		About:    "request/response: requests per second and round-trip latency percentiles; --sizes are then the responses'",
		Validate: validate,
		Cells:    cells,
		Key:      key,
		Flags: []matrix.Flag{
			{Name: "req-size", Default: "512", Usage: "request size (bytes, or with K/M)"},
			{Name: "conns", Default: "1", List: true, Usage: "connections, each with one request in flight (a list makes more cells)"},
		},
		Apply:  apply,
		Metric: "rps",
	}); err != nil {
		panic(err)
	}
}

// apply sets the request size and the connection counts; the response
// sizes default to 4 KiB, and directions and streams do not apply.
func apply(s *matrix.Spec, f matrix.Flags) error {
	if f.Changed("direction") || f.Changed("streams") {
		return errors.New("--direction and --streams are for --mode bulk; rr mode has --conns")
	}
	s.Directions = nil
	if !f.Changed("sizes") {
		s.Sizes = []int{DefaultResponse}
	}
	req, err := matrix.ParseSize(f.Value("req-size"))
	if err != nil {
		return fmt.Errorf("--req-size: %w", err)
	}
	s.ReqSize = req
	s.Conns, err = matrix.ParseCounts(f.List("conns"), "--conns")
	return err
}

// validate adds rr mode's own checks to the common ones: the request size
// and the connection counts.
func validate(s *matrix.Spec) []error {
	errs := s.CheckCommon()
	if s.ReqSize <= 0 || s.ReqSize > matrix.MaxSize {
		errs = append(errs, fmt.Errorf("request size %d: must be 1 byte to 16 MiB", s.ReqSize))
	}
	if len(s.Conns) == 0 {
		errs = append(errs, errors.New("rr mode needs at least one connection count (--conns)"))
	}
	for _, n := range s.Conns {
		if n < 1 || n > matrix.MaxConns {
			errs = append(errs, fmt.Errorf("connections %d: must be 1..%d", n, matrix.MaxConns))
		}
	}
	return errs
}

// cells enumerates an rr matrix like the default one, with the connection
// counts in place of the directions, the sizes being the responses'.
func cells(s *matrix.Spec) []matrix.Cell {
	var out []matrix.Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, conns := range s.Conns {
				for _, crypto := range s.Crypto {
					for _, cc := range s.CCAxis() {
						for _, size := range s.Sizes {
							for _, t := range s.Transports {
								out = append(out, matrix.Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto,
									Direction: Direction, Streams: 1, Mode: Name, ReqSize: s.ReqSize, Conns: conns,
									Netem: s.Netem, CC: cc})
							}
						}
					}
				}
			}
		}
	}
	return out
}

// key is an rr cell's key (before the common suffixes).
func key(c matrix.Cell) string {
	return fmt.Sprintf("%s/rr/req=%d/resp=%d/mtu=%d/gso=%s/crypto=%s/conns=%d",
		c.Transport, c.ReqSize, c.Size, c.MTU, matrix.OnOff(c.GSO), matrix.OnOff(c.Crypto), c.Conns)
}

// Cell is an rr cell of transport t in spec s.
func Cell(s matrix.Spec, t string, size, mtu int, gso, crypto bool, conns int) matrix.Cell {
	return matrix.Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: Direction, Streams: 1,
		Mode: Name, ReqSize: s.ReqSize, Conns: conns}
}

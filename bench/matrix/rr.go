package matrix

import (
	"errors"
	"fmt"
)

// ModeRR is request/response: round trips, latency percentiles.
const ModeRR = Mode("rr")

// DirectionRR is an rr-mode cell's Direction: both ways, a request and its
// response.
const DirectionRR = Direction(ModeRR)

func init() {
	if err := RegisterModeSpec(ModeRR, ModeSpec{
		About:    "request/response: requests per second and round-trip latency percentiles; --sizes are then the responses'",
		Validate: (*Spec).validateRR,
		Cells:    (*Spec).rrCells,
		Key:      Cell.rrKey,
	}); err != nil {
		panic(err)
	}
}

// The defaults of rr mode: a small request and a few-KiB response, as
// msquic's secnetperf measures requests per second (-up:512 -down:4000);
// the module's perf_test -d 1 sends 1 KiB each way.
const (
	DefaultRRRequest  = 512
	DefaultRRResponse = 4 << 10
)

// MaxConns is the most connections an rr cell may use.
const MaxConns = 1000

// validateRR adds rr mode's own checks to the common ones: the request
// size and the connection counts.
func (s *Spec) validateRR() []error {
	errs := s.CheckCommon()
	if s.ReqSize <= 0 || s.ReqSize > MaxSize {
		errs = append(errs, fmt.Errorf("request size %d: must be 1 byte to 16 MiB", s.ReqSize))
	}
	if len(s.Conns) == 0 {
		errs = append(errs, errors.New("rr mode needs at least one connection count (--conns)"))
	}
	for _, n := range s.Conns {
		if n < 1 || n > MaxConns {
			errs = append(errs, fmt.Errorf("connections %d: must be 1..%d", n, MaxConns))
		}
	}
	return errs
}

// rrCells enumerates an rr matrix like Cells, with the connection counts in
// place of the directions, the sizes being the responses'.
func (s *Spec) rrCells() []Cell {
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, conns := range s.Conns {
				for _, crypto := range s.Crypto {
					for _, cc := range s.CCAxis() {
						for _, size := range s.Sizes {
							for _, t := range s.Transports {
								out = append(out, Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto,
									Direction: DirectionRR, Streams: 1, Mode: ModeRR, ReqSize: s.ReqSize, Conns: conns,
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

func (c Cell) rrKey() string {
	return fmt.Sprintf("%s/rr/req=%d/resp=%d/mtu=%d/gso=%s/crypto=%s/conns=%d",
		c.Transport, c.ReqSize, c.Size, c.MTU, OnOff(c.GSO), OnOff(c.Crypto), c.Conns)
}

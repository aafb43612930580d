package matrix

import (
	"errors"
	"fmt"

	"kquic.dev/bench/transport"
)

// ModeHandshake measures connection setups.
const ModeHandshake = Mode("handshake")

func init() {
	if err := RegisterModeSpec(ModeHandshake, ModeSpec{
		About:    "connection setups per second and time to first byte; --sizes is the request and answer, --streams the handshakes at once",
		Validate: (*Spec).validateHandshake,
		Cells:    (*Spec).handshakeCells,
	}); err != nil {
		panic(err)
	}
}

// Handshake mode (Spec.Mode ModeHandshake) measures connection setup
// instead of goodput. Every exchange is a fresh connection: the client
// dials, sends a request of the cell's size, reads an answer of the same
// size and closes. A sample counts the exchanges completed per second and
// the time from the start of each dial to the first byte of its answer
// (TTFB), with Streams exchanges running at once. The setups are each
// transport's full handshake ("1-RTT": kquic, quic-go, ktls's TCP + TLS 1.3
// with kernel TLS after the handshake, plain TCP) and, for the QUIC
// transports, the resumption of a session ticket from an earlier
// connection to the same server with the request sent as 0-RTT data (Cell
// Early).

// validateHandshake checks a handshake-mode spec, naming every problem. The
// directions and encryption do not apply: every setup encrypts but plain
// TCP.
func (s *Spec) validateHandshake() []error {
	var errs []error
	errs = append(errs, s.CheckAxes("request")...)
	if len(s.GSO) == 0 {
		errs = append(errs, errors.New("--gso needs at least one of on, off"))
	}
	if s.Streams < 1 || s.Streams > 1000 {
		errs = append(errs, fmt.Errorf("streams (handshakes at once) %d: must be 1..1000", s.Streams))
	}
	if s.Time <= WindowLead {
		errs = append(errs, fmt.Errorf("time %v: must be over %v", s.Time, WindowLead))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %v: must not be negative", s.Warmup))
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	return errs
}

// handshakeCells enumerates a handshake-mode matrix: every transport's full
// handshake and, for the QUIC transports, 0-RTT resumption, per MTU, GSO
// setting and request size.
func (s *Spec) handshakeCells() []Cell {
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, size := range s.Sizes {
				for _, t := range s.Transports {
					c := Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: t != "tcp", Direction: "up", Streams: s.Streams}
					out = append(out, c)
					if transport.SupportsEarly(t) {
						c.Early = true
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// SetupName names a handshake-mode cell's setup: "kquic 1-RTT",
// "quic-go 0-RTT", "ktls (TCP + TLS 1.3)", "tcp".
func SetupName(c Cell) string {
	switch {
	case c.Early:
		return c.Transport + " 0-RTT"
	case transport.SupportsEarly(c.Transport):
		return c.Transport + " 1-RTT"
	case c.Transport == "ktls":
		return "ktls (TCP + TLS 1.3)"
	case c.Transport == "tcp":
		return "tcp (no TLS)"
	}
	return c.Transport
}

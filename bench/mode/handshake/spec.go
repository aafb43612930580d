// Package handshake is kqbench's connection-setup mode (--mode
// handshake): Streams clients run exchanges back to back (a fresh
// connection each: dial, a request of the cell's size, an answer of the
// same size, close), the full handshake or a 0-RTT resumption (Cell.Early);
// a sample counts the exchanges per second and their times to first byte
// in an HDR histogram. Its spec, results and tables build on every
// platform; its measuring (measure_linux.go) on Linux.
package handshake

import (
	"errors"
	"fmt"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/transport"
)

// Name is the mode's name (--mode handshake).
const Name = matrix.Mode("handshake")

func init() {
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{
		About: "connection setups per second and time to first byte; --sizes is the request and answer, --streams the handshakes at once",
		Help: `--mode handshake measures connection setup instead: every exchange is a
fresh connection that sends a request of --sizes bytes and reads an answer
as large, for kquic and quic-go both with a full (1-RTT) handshake and
resuming a session with the request as 0-RTT data, TCP + TLS 1.3 with kernel
TLS (ktls) and plain TCP. One table: handshakes per second and percentiles
of the time to the first byte of the answer.`,
		Notes:    map[string]string{"streams": "handshakes at once"},
		Validate: validate,
		Cells:    cells,
		Apply:    apply,
		Metric:   "handshakes",
	}); err != nil {
		panic(err)
	}
}

// apply sets the mode's defaults where the flags were not given: a 64-byte
// request and answer, MTU 1500, GSO on; and refuses two-host mode.
func apply(s *matrix.Spec, f matrix.Flags) error {
	if f.Changed("peer") {
		return errors.New("--mode handshake runs on the single-host topology only (or in the guest with --vm); drop --peer")
	}
	if !f.Changed("sizes") {
		s.Sizes = []int{64}
	}
	if !f.Changed("mtus") {
		s.MTUs = []int{1500}
	}
	if !f.Changed("gso") {
		s.GSO = []bool{true}
	}
	return nil
}

// The handshake mode measures connection setup instead of goodput. Every exchange is a fresh connection: the client
// dials, sends a request of the cell's size, reads an answer of the same
// size and closes. A sample counts the exchanges completed per second and
// the time from the start of each dial to the first byte of its answer
// (TTFB), with Streams exchanges running at once. The setups are each
// transport's full handshake ("1-RTT": kquic, quic-go, ktls's TCP + TLS 1.3
// with kernel TLS after the handshake, plain TCP) and, for the QUIC
// transports, the resumption of a session ticket from an earlier
// connection to the same server with the request sent as 0-RTT data (Cell
// Early).

// validate checks a handshake-mode spec, naming every problem. The
// directions and encryption do not apply: every setup encrypts but plain
// TCP.
func validate(s *matrix.Spec) []error {
	var errs []error
	errs = append(errs, s.CheckAxes("request")...)
	if len(s.GSO) == 0 {
		errs = append(errs, errors.New("--gso needs at least one of on, off"))
	}
	if s.Streams < 1 || s.Streams > 1000 {
		errs = append(errs, fmt.Errorf("streams (handshakes at once) %d: must be 1..1000", s.Streams))
	}
	if s.Time <= matrix.WindowLead {
		errs = append(errs, fmt.Errorf("time %v: must be over %v", s.Time, matrix.WindowLead))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %v: must not be negative", s.Warmup))
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	return errs
}

// cells enumerates a handshake-mode matrix: every transport's full
// handshake and, for the QUIC transports, 0-RTT resumption, per MTU, GSO
// setting and request size.
func cells(s *matrix.Spec) []matrix.Cell {
	var out []matrix.Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, size := range s.Sizes {
				for _, t := range s.Transports {
					c := matrix.Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: t != "tcp", Direction: "up", Streams: s.Streams}
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
func SetupName(c matrix.Cell) string {
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

package matrix

import (
	"fmt"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// MaxWindow is the largest --window: the module's limit on max_stream_data.
const MaxWindow = 268435455

// CheckImpairments checks the spec's netem, congestion controls, window
// and UDP buffer.
func (s *Spec) CheckImpairments() []error {
	var errs []error
	if _, err := topo.ParseNetem(s.Netem); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, cc := range s.CC {
		if err := transport.ValidCongestionControl(cc); err != nil {
			errs = append(errs, err)
		}
		if seen[cc] {
			errs = append(errs, fmt.Errorf("congestion control %q given twice", cc))
		}
		seen[cc] = true
	}
	if s.Window != 0 && (s.Window < 1200 || s.Window > MaxWindow) {
		errs = append(errs, fmt.Errorf("window %d: must be 1200..%d bytes (0: the transports' defaults)", s.Window, MaxWindow))
	}
	if s.UDPRcvBuf < 0 {
		errs = append(errs, fmt.Errorf("udp-rcvbuf %d: must not be negative", s.UDPRcvBuf))
	}
	return errs
}

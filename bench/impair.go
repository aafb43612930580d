//go:build linux

package bench

import (
	"errors"
	"fmt"
	"strings"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// MaxWindow is the largest --window: the module's limit on max_stream_data.
const MaxWindow = 268435455

// validateImpairments checks the spec's netem, congestion controls, window
// and UDP buffer.
func (s *Spec) validateImpairments() []error {
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
	switch s.Mode {
	case "", ModeBulk, ModeRR:
	case ModeStreams:
		for _, d := range s.Directions {
			if d != "up" {
				errs = append(errs, fmt.Errorf("streams mode sends client to server: direction %q does not apply", d))
			}
		}
	}
	if s.UDPRcvBuf < 0 {
		errs = append(errs, fmt.Errorf("udp-rcvbuf %d: must not be negative", s.UDPRcvBuf))
	}
	return errs
}

// ccAxis is the congestion controls the cells take: "" (the defaults)
// without --cc.
func (s *Spec) ccAxis() []string {
	if len(s.CC) == 0 {
		return []string{""}
	}
	return s.CC
}

// netem is the spec's impairment (Validate has checked it).
func (s *Spec) netem() topo.Netem {
	n, _ := topo.ParseNetem(s.Netem)
	return n
}

// options are the transport options of a cell of the spec.
func (s *Spec) options(c Cell) transport.Options {
	o := c.options()
	o.Window, o.UDPRcvBuf = s.Window, s.UDPRcvBuf
	return o
}

// options are the transport options the cell itself decides.
func (c Cell) options() transport.Options {
	return transport.Options{Crypto: c.Crypto, GSO: c.GSO, CC: c.CC}
}

// impairTitle says, for a table title, what impairs the link and which
// congestion control the table's cells use ("" when neither is set).
func (s *Spec) impairTitle(cc string) string {
	var p []string
	if n := s.netem(); !n.IsZero() {
		p = append(p, n.Title())
	}
	if cc != "" {
		p = append(p, "congestion control "+cc+" (quic-go: its own CUBIC)")
	}
	if s.Window > 0 {
		p = append(p, fmt.Sprintf("QUIC window %s", sizeName(s.Window)))
	}
	if len(p) == 0 {
		return ""
	}
	return ", " + strings.Join(p, ", ")
}

// applyNetem puts the spec's impairment on the topology and says what it
// did in the log.
func (r *Runner) applyNetem(t *topo.Topology) error {
	n := r.Spec.netem()
	if n.IsZero() {
		return nil
	}
	if err := t.SetNetem(n); err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	q, _ := t.ClientDevice().Netem()
	fmt.Fprintf(r.Log, "impairment: %s; on each end of the veth pair: %s\n", n.Title(), q)
	return nil
}

// withCC is a copy of the document with only the cells of one congestion
// control, for its own tables.
func (d *Document) withCC(cc string) *Document {
	c := *d
	c.Spec.CC = []string{cc}
	c.Cells = nil
	for _, r := range d.Cells {
		if r.CC == cc {
			c.Cells = append(c.Cells, r)
		}
	}
	return &c
}

// transportLabel names a cell's transport in a table row, with its
// congestion control and, in streams mode, its multiplexing when set
// ("ktls/bbr/mux").
func transportLabel(c Cell) string {
	s := c.Transport
	if c.CC != "" {
		s += "/" + c.CC
	}
	if c.Mux {
		s += "/mux"
	}
	return s
}

// singleHostOnly refuses, in two-host mode, what needs the single-host
// topology.
func (r *Runner) singleHostOnly() error {
	if r.Spec.Netem != "" {
		return errors.New("matrix: --netem needs the single-host topology (two-host mode does not impair the NICs' link)")
	}
	if r.Spec.Mode == ModeStreams {
		return errors.New("matrix: --mode streams runs on the single-host topology only (its server checks the objects in this process)")
	}
	return nil
}

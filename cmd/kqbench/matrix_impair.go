//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/topo"
)

// impairFlags are kqbench matrix's impairment, congestion-control and
// flow-control flags.
type impairFlags struct {
	netem          string
	cc             []string
	window, rcvbuf string
}

func (f *impairFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.netem, "netem", "", "impair the veth pair with netem: a profile ("+strings.Join(topo.ProfileNames(), ", ")+
		") or delay=,jitter=,loss=,reorder=,rate= (delay and jitter are the round trip's, half on each end; loss, reorder and rate apply to each direction)")
	fs.StringSliceVar(&f.cc, "cc", nil, "congestion controls to compare: reno,cubic,bbr (TCP_CONGESTION for tcp and ktls, the module's config for kquic; quic-go always uses its CUBIC)")
	fs.StringVar(&f.window, "window", "", "flow-control window of the QUIC transports, per stream and connection (bytes, or with K/M; default: theirs)")
	fs.StringVar(&f.rcvbuf, "udp-rcvbuf", "", "quic-go's UDP receive buffer (SO_RCVBUF, bytes or with K/M), set after quic-go raised it")
}

// apply puts the flags into the spec.
func (f *impairFlags) apply(s *matrix.Spec) error {
	if _, err := topo.ParseNetem(f.netem); err != nil {
		return fmt.Errorf("--netem: %w", err)
	}
	if f.netem != "none" {
		s.Netem = strings.TrimSpace(f.netem)
	}
	s.CC = matrix.SplitList(f.cc)
	for _, v := range []struct {
		flag, val string
		dst       *int
	}{{"--window", f.window, &s.Window}, {"--udp-rcvbuf", f.rcvbuf, &s.UDPRcvBuf}} {
		if v.val == "" {
			continue
		}
		n, err := parseSizes([]string{v.val})
		if err != nil || len(n) != 1 {
			return fmt.Errorf("%s: %q is not a size (bytes, or with K or M)", v.flag, v.val)
		}
		*v.dst = n[0]
	}
	return nil
}

//go:build linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
)

// h3Flags are the flags of --mode h3.
type h3Flags struct {
	workloads  []string
	objectSize string
	resources  int
	rounds     int
}

func (h *h3Flags) register(cmd *cobra.Command) {
	def := matrix.DefaultWebSpec()
	f := cmd.Flags()
	f.StringSliceVar(&h.workloads, "workloads", def.Workloads, "h3: the web workloads: download (GET of each --sizes, goodput), upload (POST of each --sizes), objects (--conns connections with --streams requests in flight each: requests/s, latency), page (one HTML and --resources objects at once: time to last byte), setup (a fresh connection's full, resumed and 0-RTT handshakes: time to first byte), or setup-full, setup-resumed, setup-0rtt")
	f.StringVar(&h.objectSize, "object-size", "4K", "h3: the body of each small object and page resource (bytes, or with K/M; up to 1M)")
	f.IntVar(&h.resources, "resources", def.Resources, "h3: the page's sub-resources")
	f.IntVar(&h.rounds, "rounds", def.Rounds, "h3: fresh connections per setup sample")
}

// apply sets the h3 mode's spec and its defaults where the flags were not
// given: its five transports, a 1 MiB download, MTU 1500, GSO on, two
// connections with eight requests in flight each.
func (h *h3Flags) apply(cmd *cobra.Command, s *matrix.Spec) error {
	f := cmd.Flags()
	if s.Mode != matrix.ModeH3 {
		for _, n := range []string{"workloads", "object-size", "resources", "rounds"} {
			if f.Changed(n) {
				return fmt.Errorf("matrix: --%s is for --mode h3", n)
			}
		}
		return nil
	}
	if f.Changed("direction") || f.Changed("crypto") {
		return fmt.Errorf("matrix: --direction and --crypto do not apply to --mode h3: its workloads say the direction, and every row encrypts")
	}
	sz, err := parseSizes([]string{h.objectSize})
	if err != nil || len(sz) != 1 {
		return fmt.Errorf("matrix: --object-size %q is not one size", h.objectSize)
	}
	s.Web = &matrix.WebSpec{Workloads: splitList(h.workloads), ObjectSize: sz[0], Resources: h.resources, Rounds: h.rounds}
	if !f.Changed("transports") {
		s.Transports = matrix.H3Transports()
	}
	if !f.Changed("sizes") {
		s.Sizes = []int{1 << 20}
	}
	if !f.Changed("mtus") {
		s.MTUs = []int{1500}
	}
	if !f.Changed("gso") {
		s.GSO = []bool{true}
	}
	if !f.Changed("streams") {
		s.Streams = 8
	}
	if !f.Changed("conns") {
		s.Conns = []int{2}
	}
	s.Directions, s.Crypto = nil, []bool{true}
	return nil
}

//go:build linux

package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"kquic.dev/bench/matrix"
)

// modeFlags are matrix's --mode and the flags of rr mode.
type modeFlags struct {
	mode    string
	reqSize string
	conns   []string
	web     h3Flags
}

func (m *modeFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&m.mode, "mode", string(matrix.ModeBulk), "what a cell measures: bulk (goodput of streams in one direction), rr (request/response: requests per second and round-trip latency percentiles; --sizes are then the responses') streams (completion time of each of --streams objects of each --sizes, sent at once; tcp and ktls also multiplexed over one connection) handshake (connection setups per second and time to first byte; --sizes is the request and answer, --streams the handshakes at once) or h3 (web workloads over HTTP/3 on kernel QUIC and quic-go, HTTP/2 on kTLS and TLS: see --workloads)")
	f.StringVar(&m.reqSize, "req-size", "512", "rr: request size (bytes, or with K/M)")
	f.StringSliceVar(&m.conns, "conns", []string{"1"}, "rr: connections, each with one request in flight (a list makes more cells); h3: the objects workload's connections")
	m.web.register(cmd)
}

// apply sets the spec's mode; in rr mode the response sizes default to 4
// KiB and directions do not apply.
func (m *modeFlags) apply(cmd *cobra.Command, s *matrix.Spec) error {
	switch matrix.Mode(m.mode) {
	case matrix.ModeH3:
		if cmd.Flags().Changed("req-size") {
			return fmt.Errorf("matrix: --req-size is for --mode rr")
		}
		s.Mode = matrix.ModeH3
		var err error
		if s.Conns, err = parseInts(m.conns, "--conns"); err != nil {
			return err
		}
		return m.web.apply(cmd, s)
	case matrix.ModeBulk, matrix.ModeStreams, matrix.ModeHandshake:
		for _, n := range []string{"req-size", "conns"} {
			if cmd.Flags().Changed(n) {
				return fmt.Errorf("matrix: --%s is for --mode rr", n)
			}
		}
		if matrix.Mode(m.mode) != matrix.ModeBulk {
			s.Mode = matrix.Mode(m.mode)
		}
		return m.web.apply(cmd, s)
	case matrix.ModeRR:
	default:
		return fmt.Errorf("matrix: --mode %q: use %s, %s, %s, %s or %s", m.mode, matrix.ModeBulk, matrix.ModeRR, matrix.ModeStreams, matrix.ModeHandshake, matrix.ModeH3)
	}
	s.Mode = matrix.ModeRR
	if cmd.Flags().Changed("direction") || cmd.Flags().Changed("streams") {
		return fmt.Errorf("matrix: --direction and --streams are for --mode bulk; rr mode has --conns")
	}
	s.Directions = nil
	if !cmd.Flags().Changed("sizes") {
		s.Sizes = []int{matrix.DefaultRRResponse}
	}
	req, err := parseSizes([]string{m.reqSize})
	if err != nil || len(req) != 1 {
		return fmt.Errorf("matrix: --req-size %q is not one size", m.reqSize)
	}
	s.ReqSize = req[0]
	if s.Conns, err = parseInts(m.conns, "--conns"); err != nil {
		return err
	}
	return m.web.apply(cmd, s)
}

//go:build linux

package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
)

// presets are named sets of matrix flags: each sets the flags it names, and
// refuses a flag of its own given beside it.
var presets = map[string][][2]string{
	// The kernel QUIC module's README tables (lxin/quic, "performance
	// tests with iperf"): QUIC | kTLS and QUIC without 1-RTT encryption |
	// TCP, 1 to 64 KiB, MTU 1500 and 9000, with TCP's and kTLS's GSO off
	// again, the kernel's figure (the native driver: the module author's
	// iperf3 fork with --iperf-quic, else perf_test) beside the Go
	// bindings'; the ratios the README's readers compute follow the tables.
	"lxin-readme": {
		{"transports", "kquic,ktls,tcp"},
		{"sizes", "1K,4K,16K,64K"},
		{"mtus", "1500,9000"},
		{"gso", "on,off"},
		{"crypto", "on,off"},
		{"direction", "up"},
		{"driver", "go,native"},
		{"mode", "bulk"},
	},
}

// presetNames lists the presets, for help and errors.
func presetNames() string {
	var names []string
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// applyPreset sets the preset's flags on cmd; a flag of the preset that
// was given too is an error (the preset would override it silently).
func applyPreset(cmd *cobra.Command, name string) error {
	p, ok := presets[name]
	if !ok {
		return fmt.Errorf("matrix: --preset %q: there is %s", name, presetNames())
	}
	var clash []string
	for _, kv := range p {
		if cmd.Flags().Changed(kv[0]) {
			clash = append(clash, "--"+kv[0])
		}
	}
	if len(clash) > 0 {
		slices.Sort(clash)
		return fmt.Errorf("matrix: --preset %s sets %s: drop %s, or the preset", name, strings.Join(clash, ", "), strings.Join(clash, ", "))
	}
	for _, kv := range p {
		if err := cmd.Flags().Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("matrix: --preset %s: --%s %s: %w", name, kv[0], kv[1], err)
		}
	}
	return nil
}

// parseReadSize reads --read-size: auto (reads of the message size beside
// the native driver, so that both drivers' receivers do what iperf3 does;
// else kqbench's default, 0), msg, or a size.
func parseReadSize(v string, drivers []matrix.Driver) (int, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto", "":
		if slices.Contains(drivers, matrix.DriverNative) {
			return matrix.ReadMessage, nil
		}
		return 0, nil
	case "msg":
		return matrix.ReadMessage, nil
	}
	n, err := parseSizes([]string{v})
	if err != nil || len(n) != 1 {
		return 0, fmt.Errorf("--read-size %q: use auto, msg or a size such as 64K", v)
	}
	return n[0], nil
}

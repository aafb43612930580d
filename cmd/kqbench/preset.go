//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"kquic.dev/bench/matrix"
)

// checkPreset returns the preset called name, refusing a flag of the preset
// that was given beside it (the preset would override it silently).
func checkPreset(cmd *cobra.Command, name string) (matrix.Preset, error) {
	p, err := matrix.LookupPreset(name)
	if err != nil {
		return p, fmt.Errorf("matrix: --preset: %w", err)
	}
	var clash []string
	for _, f := range matrix.PresetFlags {
		if cmd.Flags().Changed(f) {
			clash = append(clash, "--"+f)
		}
	}
	if len(clash) > 0 {
		slices.Sort(clash)
		return p, fmt.Errorf("matrix: --preset %s sets %s: drop %s, or the preset", name, strings.Join(clash, ", "), strings.Join(clash, ", "))
	}
	return p, nil
}

// parseReadSize reads --read-size: auto (reads of the message size beside
// a driver whose tools read so, matrix.DriverSpec.ReadMessage: so that both
// drivers' receivers do what iperf3 does; else kqbench's default, 0), msg,
// or a size.
func parseReadSize(v string, drivers []matrix.Driver) (int, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto", "":
		for _, d := range drivers {
			if ds, _ := matrix.DriverSpecOf(d); ds.ReadMessage {
				return matrix.ReadMessage, nil
			}
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

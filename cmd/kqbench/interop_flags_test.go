//go:build linux

package main

import (
	"slices"
	"testing"
)

// TestWithModules: the guest's command names the built module files in
// place of the --module sources it was given.
func TestWithModules(t *testing.T) {
	args := []string{"kqbench", "interop", "--module", "src:/x", "--cases", "handshake", "--module=src:/y", "--out", "r.json"}
	got := withModules(args, []string{"/cache/a/quic.ko"})
	want := []string{"kqbench", "interop", "--cases", "handshake", "--out", "r.json", "--module", "/cache/a/quic.ko"}
	if !slices.Equal(got, want) {
		t.Errorf("withModules = %q, want %q", got, want)
	}
	if got := withModules(args, nil); slices.Contains(got, "--module") {
		t.Errorf("withModules with no module = %q, still names one", got)
	}
}

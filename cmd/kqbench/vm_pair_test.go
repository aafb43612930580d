//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"kquic.dev/kmod/vm"
)

// pairFor parses a `kqbench vm` command line and derives the pair from the
// guest A config given.
func pairFor(t *testing.T, a vm.Config, args ...string) (vm.PairConfig, error) {
	t.Helper()
	var v vmFlags
	cmd := &cobra.Command{Use: "vm"}
	v.register(cmd)
	v.pair = &pairFlags{}
	v.pair.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	return v.pair.pairConfig(cmd, a, []string{"true"})
}

// TestPairFlags: guest B takes A's kernel, tree and modules unless told
// otherwise; "none" gives it no module; a kernel without its tree and a
// malformed offload are errors that say what to give.
func TestPairFlags(t *testing.T) {
	a := vm.Config{Kernel: "/k/a", Modules: "/m/a", ModuleFiles: []string{"/a/quic.ko"}, Load: []string{"tls"}, CPUs: 2}
	pc, err := pairFor(t, a, "--peer-cmd", "serve")
	if err != nil {
		t.Fatal(err)
	}
	if pc.B.Kernel != "/k/a" || pc.B.Modules != "/m/a" || len(pc.B.ModuleFiles) != 1 || pc.B.Load[0] != "tls" {
		t.Errorf("B %+v: want A's kernel, tree, module and loads", pc.B)
	}
	if got := strings.Join(pc.ArgsB, " "); got != "/bin/sh -c serve" {
		t.Errorf("B runs %q", got)
	}
	pc, err = pairFor(t, a, "--peer-cmd", "serve", "--b-module", "none", "--b-kernel", "/k/b", "--b-modules", "/m/b",
		"--b-cpus", "4", "--link-offload", "tso=off,gro=on", "--link-mtu", "9000", "--link-backend", "socket")
	if err != nil {
		t.Fatal(err)
	}
	if pc.B.Kernel != "/k/b" || pc.B.Modules != "/m/b" || len(pc.B.ModuleFiles) != 0 || pc.B.CPUs != 4 {
		t.Errorf("B %+v: want kernel /k/b, tree /m/b, no module, 4 CPUs", pc.B)
	}
	if len(pc.A.ModuleFiles) != 1 || pc.A.Kernel != "/k/a" {
		t.Errorf("A %+v changed with B's flags", pc.A)
	}
	if l := pc.Link; l.MTU != 9000 || l.Backend != "socket" || l.Offloads["tso"] || !l.Offloads["gro"] || len(l.Offloads) != 2 {
		t.Errorf("link %+v", l)
	}
	for _, bad := range [][]string{
		{"--b-kernel", "/k/b"},
		{"--link-offload", "tso"},
		{"--link-offload", "tsx=off"},
	} {
		_, err := pairFor(t, a, append([]string{"--peer-cmd", "x"}, bad...)...)
		if err == nil {
			t.Errorf("%q: no error", bad)
		} else {
			t.Logf("%q: %v", bad, err)
		}
	}
}

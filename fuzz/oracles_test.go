//go:build linux

package fuzz

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/conformance"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/vm"
	"kquic.dev/kquic"
)

// A WARNING: line in the kernel log in the middle of a run is reported with
// the inputs before it. It writes to the kernel log, so it runs in the guest
// (make test's guest pass), not on a developer's host.
func TestKernelLogOracleFires(t *testing.T) {
	if !vm.InGuest() {
		t.Skip("writes a WARNING: line to the kernel log: runs in the guest (make test)")
	}
	k, err := OpenKernelLog()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: conformance.QuicGo{}, Gen: Generator{Seed: 9}, Inputs: 120, Batch: 40, Kernel: k,
		Inject: func(seq int) {
			if seq == 60 {
				if err := os.WriteFile("/dev/kmsg", []byte("WARNING: kqbench fuzz oracle test\n"), 0); err != nil {
					t.Error(err)
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("%d findings, want the one WARNING: %+v", len(rep.Findings), rep.Findings)
	}
	f := rep.Findings[0]
	if f.Oracle != "kernel-log" || !strings.Contains(f.Detail, "WARNING: kqbench fuzz oracle test") || f.After < 60 || f.After >= 80 {
		t.Fatalf("finding %+v: want the kernel log's line, seen by the check after input 79", f)
	}
	if len(f.Window) != windowSize || f.Window[len(f.Window)-1].Seq != f.After {
		t.Fatalf("the finding's inputs: %d, the last %d", len(f.Window), f.Window[len(f.Window)-1].Seq)
	}
}

// A guest whose kernel crashes in the middle of a run is a finding with the
// kernel's last words and every input logged up to the crash.
func TestGuestDeathOracleFires(t *testing.T) {
	cfg := testenv.VM(t)
	dir := t.TempDir()
	log, out := filepath.Join(dir, "inputs.jsonl"), filepath.Join(dir, "report.json")
	cfg.Shares = []string{dir}
	cfg.Timeout = 5 * time.Minute
	args := []string{cfg.Init, "fuzz", "--target", "quic-go", "--roles", "server", "--inputs", "400", "--seed", "11",
		"--log", log, "--out", out, "--inject", "crash@40"}
	rep, err := RunGuest(context.Background(), GuestRun{Config: cfg, Args: args, Log: log, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v, want the guest's death", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Oracle != "guest" || !strings.Contains(f.Detail, "panic") || f.After != 40 {
		t.Fatalf("finding %q after input %d: %s; want the guest's panic after input 40", f.Oracle, f.After, f.Detail)
	}
	if len(f.Lines) == 0 || len(f.Window) != windowSize || f.Window[windowSize-1].Seq != 40 {
		t.Fatalf("the finding lacks the console (%d lines) or its inputs (%d)", len(f.Lines), len(f.Window))
	}
}

// Against kernel QUIC (the guest, with the module): a short run that must
// reach the frame parser after handshakes in both roles, find nothing, and
// leave no socket behind; and the leak oracle fires on a socket kept open.
func TestKquicShortRun(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	target, err := conformance.Open("kquic")
	if err != nil {
		t.Fatal(err)
	}
	k, err := OpenKernelLog()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: target, Roles: []conformance.Role{conformance.Server, conformance.Client},
		Gen: Generator{Seed: 1, InitialShare: 0.2}, Inputs: 200, Batch: 50, Kernel: k, Leaks: &ModuleLeaks{}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteSummary(&b)
	t.Log(b.String())
	if rep.PostHandshake < 100 || rep.Connections == 0 {
		t.Fatalf("only %d inputs after a handshake", rep.PostHandshake)
	}
	for _, f := range rep.Findings {
		t.Errorf("finding (%s) after input %d: %s %v", f.Oracle, f.After, f.Detail, f.Lines)
	}

	leaks := &ModuleLeaks{}
	if err := leaks.Baseline(); err != nil {
		t.Fatal(err)
	}
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: mustPair(t).Server})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lctx, lcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer lcancel()
	if err := leaks.Settled(lctx); err == nil || !strings.Contains(err.Error(), "sockets QUIC") {
		t.Fatalf("a listener kept open: Settled = %v, want the QUIC socket named", err)
	}
}

func mustPair(t *testing.T) *conformance.TLSPair {
	p, err := conformance.NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

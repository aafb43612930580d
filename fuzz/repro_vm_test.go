//go:build linux

package fuzz

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/conformance"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// A finding in a guest is narrowed in fresh guests to a reproducer, and the
// reproducer replays as a Go test: TestReproducers, in a fresh guest, fails
// on it with the finding, and passes on a copy without the input that
// caused it. The finding is the kernel log's, from a marked input that
// writes a WARNING: line (an input that trips a bug, as far as the oracles
// can tell).
func TestReproducerReplays(t *testing.T) {
	cfg := testenv.VM(t)
	dir := t.TempDir()
	cfg.Shares = []string{dir}
	cfg.Timeout = 5 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	fuzzArgs := []string{cfg.Init, "fuzz", "--target", "quic-go", "--roles", "server"}
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	rep, err := RunVM(ctx, VMRun{
		Config:  cfg,
		Dir:     run,
		Command: append(slices.Clip(fuzzArgs), "--inputs", "60", "--batch", "20", "--seed", "13", "--inject", "kmsg@25"),
		ReplayCommand: func(in, l, o string) []string {
			return append(slices.Clip(fuzzArgs), "--replay", in, "--log", l, "--out", o)
		},
		Narrow: true,
		Repro:  Reproducer{Target: "quic-go", Roles: []conformance.Role{conformance.Server}, Seed: 13},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v, want the one WARNING:", rep.Findings)
	}
	f := rep.Findings[0]
	// The kernel log is read after every batch of 20: the line written
	// before input 25 is seen after input 39.
	if f.Oracle != "kernel-log" || !strings.Contains(f.Detail, MarkLine) || f.After != 39 || f.Reproducer == "" {
		t.Fatalf("finding %+v", f)
	}
	r, inputs, err := LoadReproducer(f.Reproducer)
	if err != nil {
		t.Fatal(err)
	}
	marked := slices.IndexFunc(inputs, func(in Input) bool { return in.Mark == "kmsg" })
	// Tails of 1, 2, 4, 8 inputs up to input 39 leave input 25 out; 16
	// hold it.
	if !r.Narrowed || len(inputs) != 16 || marked < 0 || inputs[marked].Seq != 25 || inputs[len(inputs)-1].Seq != 39 {
		t.Fatalf("reproducer %+v: %d inputs, the marked one at %d", r, len(inputs), marked)
	}
	// A copy without the mark: the same inputs, nothing to find.
	clean := slices.Clone(inputs)
	clean[marked].Mark = ""
	if err := WriteReproducer(filepath.Join(run, "unmarked"), *r, clean, &f); err != nil {
		t.Fatal(err)
	}

	gcfg := testenv.VM(t)
	var out bytes.Buffer
	gcfg.Stdout, gcfg.Stderr = &out, &out
	gcfg.Env = append(os.Environ(), ReproEnv+"="+run)
	gcfg.Timeout = 5 * time.Minute
	_, err = vm.Run(ctx, gcfg, []string{testenv.GoTest(t, "kquic.dev/fuzz"), "-test.run", "^TestReproducers$", "-test.v", "-test.count=1"})
	t.Logf("TestReproducers in the guest:\n%s", out.String())
	var exit *vm.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("TestReproducers in the guest: %v, want it to fail on the reproducer", err)
	}
	for _, want := range []string{"--- FAIL: TestReproducers/finding-1", "the kernel-log finding comes back", MarkLine, "--- PASS: TestReproducers/unmarked"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the guest's test output lacks %q", want)
		}
	}
}

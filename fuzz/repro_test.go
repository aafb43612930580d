//go:build linux

package fuzz

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kquic.dev/conformance"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/vm"
)

// TestReproducers replays every reproducer under testdata/repro, or under
// the directory $KQUIC_FUZZ_REPRO names, each as a subtest that fails while
// its finding comes back: a reproducer copied there is a regression test.
// The kernel's oracles are the guest's, so it replays in the guest.
func TestReproducers(t *testing.T) {
	root := os.Getenv(ReproEnv)
	if root == "" {
		root = filepath.Join("testdata", "repro")
	}
	dirs, err := FindReproducers(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Skipf("no reproducers under %s (kqbench fuzz --vm writes them; copy one there to replay it)", root)
	}
	if !vm.InGuest() {
		t.Skip("replays in the guest (make test's guest pass), where the kernel log oracle and the module are")
	}
	for _, d := range dirs {
		name, _ := filepath.Rel(root, d)
		t.Run(name, func(t *testing.T) {
			r, inputs, err := LoadReproducer(d)
			if err != nil {
				t.Fatal(err)
			}
			var leaks LeakCheck
			if r.Target == "kquic" {
				testenv.Require(t, kmod.FeatureQUIC)
				leaks = &ModuleLeaks{}
			}
			k, err := OpenKernelLog()
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			ctx, cancel := context.WithTimeout(context.Background(), replayTimeout(len(inputs)))
			defer cancel()
			f, rep, err := Replay(ctx, r, inputs, k, leaks)
			if err != nil {
				t.Fatal(err)
			}
			if f != nil {
				t.Fatalf("the %s finding comes back (%d inputs replayed, seen after input %d): %s\n%s", f.Oracle, len(inputs), f.After, f.Detail, strings.Join(f.Lines, "\n"))
			}
			t.Logf("%d inputs replayed against %s: no %s finding", rep.Inputs, r.Target, r.Oracle)
		})
	}
}

// A reproducer round-trips through its directory, and FindReproducers finds
// it among other directories.
func TestReproducerFiles(t *testing.T) {
	hostOnly(t)
	dir := t.TempDir()
	g := Generator{Seed: 4, InitialShare: 0.3}
	var inputs []Input
	for i := 10; i < 14; i++ {
		inputs = append(inputs, g.Input(i))
	}
	inputs[2].Mark = "kmsg"
	f := &Finding{Oracle: "kernel-log", Detail: "WARNING: x at y", Lines: []string{"WARNING: x at y", "Call Trace:"}, After: 13}
	want := Reproducer{Target: "kquic", Roles: []conformance.Role{conformance.Server, conformance.Client}, Seed: 4, Narrowed: true}
	fdir := filepath.Join(dir, "run", "finding-1")
	if err := WriteReproducer(fdir, want, inputs, f); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "run", "narrow-1"), 0o755)
	found, err := FindReproducers(dir)
	if err != nil || !reflect.DeepEqual(found, []string{fdir}) {
		t.Fatalf("FindReproducers = %v, %v; want [%s]", found, err, fdir)
	}
	r, got, err := LoadReproducer(fdir)
	if err != nil {
		t.Fatal(err)
	}
	want.Schema, want.Oracle, want.Detail, want.Inputs, want.Dir = ReproSchema, f.Oracle, f.Detail, len(inputs), fdir
	if !reflect.DeepEqual(*r, want) || !reflect.DeepEqual(got, inputs) {
		t.Fatalf("read back %+v with %d inputs, want %+v with %d", *r, len(got), want, len(inputs))
	}
	log, _ := os.ReadFile(filepath.Join(fdir, "kernel.log"))
	if !strings.Contains(string(log), "Call Trace:") {
		t.Fatalf("kernel.log: %q", log)
	}
	if none, err := FindReproducers(filepath.Join(dir, "absent")); err != nil || len(none) != 0 {
		t.Fatalf("FindReproducers of a missing directory: %v, %v", none, err)
	}
}

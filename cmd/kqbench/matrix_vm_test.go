//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/results"
	"kquic.dev/kmod/vm"
)

// TestRecordGuest: the results file a guest wrote gets how the guest ran,
// and the rest of it stays as it was.
func TestRecordGuest(t *testing.T) {
	src := filepath.Join(benchData, "results", "bulk-old.json")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(out, b, 0o644)
	h0 := host.SnapshotCPU()
	time.Sleep(50 * time.Millisecond)
	h1 := host.SnapshotCPU()
	if err := recordGuest(out, &vm.Result{Accel: "tcg-multi"}, 2, time.Minute, h0, h1); err != nil {
		t.Fatal(err)
	}
	got, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	g := got.Env.Guest
	if g == nil || g.Accel != "tcg-multi" || g.CPUs != 2 || g.Seconds != 60 || g.CPUUnavailable != "" || g.HostBusyCores < 0 {
		t.Fatalf("guest record %+v", g)
	}
	old, _ := results.Load(src)
	a, _ := json.Marshal(old.Cells)
	c, _ := json.Marshal(got.Cells)
	if !bytes.Equal(a, c) {
		t.Error("recording the guest changed the cells")
	}
	// No results file (the guest failed before writing one): nothing to do.
	if err := recordGuest(filepath.Join(t.TempDir(), "none.json"), &vm.Result{Accel: "kvm"}, 2, time.Second, h0, h1); err != nil {
		t.Errorf("no results file: %v", err)
	}
}

//go:build linux

package ab_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
)

// TestSelfABInGuests runs kqbench ab for real - two guests kept up, rounds
// alternating sample by sample - with one QUIC module on both sides: no
// cell may differ significantly. The level is 0.001 (eight samples a side
// can reach p = 0.0002), so a true null fails one run in a thousand, and a
// difference between the two guests themselves would show.
func TestSelfABInGuests(t *testing.T) {
	cfg := testenv.VM(t)
	module := os.Getenv(testenv.ModuleEnv)
	if module == "" {
		t.Skipf("needs a built QUIC module: $%s=/path/quic.ko", testenv.ModuleEnv)
	}
	dir := t.TempDir()
	cmd := exec.Command(cfg.Init, "ab", "--a-module", module, "--b-module", module,
		"--kernel", cfg.Kernel, "--modules", cfg.Modules,
		"--rounds", "8", "--sizes", "4K", "--time", "1s", "--dir", dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kqbench ab: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	order := ""
	for _, l := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(l, "ab: "), " round "); ok && strings.HasPrefix(l, "ab: ") {
			order += name
		}
	}
	if order != "ABBAABBAABBAABBA" {
		t.Errorf("rounds ran in the order %s, want ABBA...", order)
	}
	a, err := results.Load(filepath.Join(dir, "A.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := results.Load(filepath.Join(dir, "B.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := results.Compare(a, b, results.CompareOptions{Alpha: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cells) == 0 {
		t.Fatal("no cell compared")
	}
	for _, cell := range c.Cells {
		d := cell.Goodput
		if d.Old.N != 8 || d.New.N != 8 {
			t.Errorf("%s: %d and %d samples, want 8 a side", cell.Key, d.Old.N, d.New.N)
		}
		if d.Significant {
			t.Errorf("%s: the same module on both sides differs: %+v", cell.Key, d)
		}
		t.Logf("%s: %.1f -> %.1f Mbit/s (%+.1f%%, p=%.3f)", cell.Key, d.Old.Center, d.New.Center, d.ChangePct, d.P)
	}
}

//go:build linux

package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kquic.dev/bench"
	"kquic.dev/bench/flame"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestMatrixProfile runs kqbench matrix --profile over one short kquic
// cell: perf records the whole machine during the samples' windows, and
// the cell's folded stacks must hold the QUIC module's functions, as must
// the flamegraph kqbench flame draws from them.
func TestMatrixProfile(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureQUIC, kmod.FeatureVeth)
	testenv.Tool(t, "perf", bench.PerfPackage)
	dir := t.TempDir()
	out := filepath.Join(dir, "m.json")
	kq := testenv.Kqbench(t)
	cmd := exec.Command(kq, "matrix", "--profile", "--quiet", "--transports", "kquic", "--sizes", "16K",
		"--mtus", "1500", "--gso", "on", "--crypto", "on", "--repeat", "2", "--time", "1s", "--warmup", "200ms", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	doc, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 1 || doc.Cells[0].Status != results.StatusOK {
		t.Fatalf("cells: %+v", doc.Cells)
	}
	c := doc.Cells[0]
	if c.Profile == "" || filepath.IsAbs(c.Profile) {
		t.Fatalf("the cell names no profile relative to the results file: %q (%s)", c.Profile, c.ProfileNote)
	}
	if !strings.Contains(c.ProfileNote, "in 2 windows") {
		t.Errorf("profile note %q: want the two samples' windows", c.ProfileNote)
	}
	folded := filepath.Join(dir, c.Profile)
	if want := filepath.Join(dir, "m", "profiles", bench.FileName(c.Cell)); folded != want {
		t.Errorf("profile at %s, want %s", folded, want)
	}
	f, err := flame.ReadFoldedFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	var quic int64
	funcs := map[string]bool{}
	for s, n := range f {
		hit := false
		for _, fr := range strings.Split(s, ";") {
			if strings.HasPrefix(fr, "quic_") && strings.HasSuffix(fr, "_[k]") {
				funcs[fr] = true
				hit = true
			}
		}
		if hit {
			quic += n
		}
	}
	t.Logf("%s: %d samples, %d in the QUIC module (%d functions)", c.ProfileNote, f.Total(), quic, len(funcs))
	if quic == 0 || len(funcs) < 3 {
		t.Fatalf("%d samples hold a quic_ frame, %d functions: the module's symbols did not resolve", quic, len(funcs))
	}
	if !funcs["quic_sendmsg_[k]"] && !funcs["quic_recvmsg_[k]"] {
		t.Errorf("neither quic_sendmsg nor quic_recvmsg was sampled while kquic moved data: %v", funcs)
	}

	if b, err := os.ReadFile(filepath.Join(dir, c.ProfileSVG)); err != nil || !strings.Contains(string(b), "<title>quic_") {
		t.Errorf("the matrix's flamegraph %q has no quic_ frame (%v)", c.ProfileSVG, err)
	}

	svg := filepath.Join(dir, "cell.svg")
	if b, err := exec.Command(kq, "flame", folded, "-o", svg).CombinedOutput(); err != nil {
		t.Fatalf("kqbench flame: %v\n%s", err, b)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	titles := regexp.MustCompile(`<title>(quic_[^ <]*) \(\d+ samples`).FindAllSubmatch(b, -1)
	if len(titles) == 0 {
		t.Fatal("the flamegraph has no quic_ frame")
	}
	if !regexp.MustCompile(`<title>all \(` + strconv.FormatInt(f.Total(), 10) + ` samples, 100.00%\)</title>`).Match(b) {
		t.Errorf("the flamegraph's root does not count the profile's %d samples", f.Total())
	}
}

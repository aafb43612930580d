//go:build linux

package bench_test

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kquic.dev/bench/flame"
	"kquic.dev/bench/profile"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestMatrixProfile runs kqbench matrix --profile over one short kquic
// cell: perf records the whole machine during the samples' windows, and
// the cell's folded stacks must hold no more samples than the windows can
// and the QUIC module's functions by name, as must the flamegraph kqbench
// flame draws from them. It asserts what a sampler promises, not which
// functions it happens to catch: at 99 Hz in a TCG guest, 238 samples in the
// module once caught 39 of its functions and neither quic_sendmsg nor
// quic_recvmsg.
func TestMatrixProfile(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureQUIC, kmod.FeatureVeth)
	testenv.Tool(t, "perf", profile.PerfPackage)
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
	// Every sample lies in a window (a retaken sample's window counts too):
	// perf samples each CPU Frequency times a second, so the profile holds
	// at most CPUs x Frequency x the windows' time, with a quarter's room
	// for timer slack and 25 samples a CPU at each window's start (on
	// hardware counters, perf's frequency mode starts each event at a period
	// of one and adapts it). Samples from outside the windows (perf runs for
	// the whole matrix, with 20 s of start-up in a TCG guest) would exceed it
	// many times over.
	var freq, nsamples, nwin int
	if _, err := fmt.Sscanf(c.ProfileNote[strings.Index(c.ProfileNote, "-F "):], "-F %d: %d samples in %d windows", &freq, &nsamples, &nwin); err != nil || nwin < 2 {
		t.Fatalf("profile note %q: want the frequency and at least the two samples' windows (%v)", c.ProfileNote, err)
	}
	longest := 0.0
	for _, s := range c.Samples {
		longest = max(longest, s.Seconds)
	}
	cpus := doc.Env.CPUs
	limit := int64(1.25*float64(cpus*freq*nwin)*longest) + int64(25*cpus*nwin)
	folded := filepath.Join(dir, c.Profile)
	if want := filepath.Join(dir, "m", "profiles", profile.FileName(c.Cell)); folded != want {
		t.Errorf("profile at %s, want %s", folded, want)
	}
	f, err := flame.ReadFoldedFile(folded)
	if err != nil {
		t.Fatal(err)
	}
	if f.Total() != int64(nsamples) || f.Total() > limit {
		t.Errorf("the profile holds %d samples (the note says %d): more than %d CPUs at %d Hz can take in %d windows of %.2f s (at most %d)",
			f.Total(), nsamples, cpus, freq, nwin, longest, limit)
	}
	// The module's frames are there, by name: its symbols resolved. Which
	// of its functions a sampler catches is chance, so no one of them is
	// required.
	var quic int64
	funcs := map[string]int64{} // samples with the function on their stack
	for s, n := range f {
		seen := map[string]bool{}
		for _, fr := range strings.Split(s, ";") {
			if strings.HasPrefix(fr, "quic_") && strings.HasSuffix(fr, "_[k]") && !seen[fr] {
				seen[fr] = true
				funcs[fr] += n
			}
		}
		if len(seen) > 0 {
			quic += n
		}
	}
	names := slices.SortedFunc(maps.Keys(funcs), func(a, b string) int { return cmp.Compare(funcs[b], funcs[a]) })
	var top []string
	for _, fn := range names[:min(len(names), 12)] {
		top = append(top, fmt.Sprintf("%s %d", strings.TrimSuffix(fn, "_[k]"), funcs[fn]))
	}
	t.Logf("%s: %d samples (at most %d), %d in the QUIC module, %d of its functions; most on the stack: %s",
		c.ProfileNote, f.Total(), limit, quic, len(funcs), strings.Join(top, ", "))
	if quic == 0 || len(funcs) < 3 {
		// What the windows held instead: the heaviest stacks' last
		// frames, and how many frames perf could not name.
		type stack struct {
			s string
			n int64
		}
		var all []stack
		unnamed := map[string]int64{}
		for s, n := range f {
			all = append(all, stack{s, n})
			for _, fr := range strings.Split(s, ";") {
				if strings.HasPrefix(fr, "[") {
					unnamed[fr] += n
				}
			}
		}
		slices.SortFunc(all, func(a, b stack) int { return cmp.Compare(b.n, a.n) })
		for _, st := range all[:min(len(all), 15)] {
			fr := strings.Split(st.s, ";")
			t.Logf("%4d %s ... %s", st.n, fr[0], strings.Join(fr[max(1, len(fr)-4):], ";"))
		}
		t.Logf("frames perf did not name (samples): %v", unnamed)
		t.Fatalf("%d samples hold a quic_ frame, %d functions: the module's symbols did not resolve", quic, len(funcs))
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

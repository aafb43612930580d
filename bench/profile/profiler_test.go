//go:build linux

package profile

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/flame"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
)

var sink uint64

// spin burns CPU until the time until on a thread named name, so that the
// profile tells it apart (as a root frame) without the binary's symbols,
// which go test strips.
func spin(t *testing.T, name string, until time.Time) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := os.ReadFile("/proc/thread-self/comm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/thread-self/comm", []byte(name), 0); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile("/proc/thread-self/comm", old, 0)
	for time.Now().Before(until) {
		for i := 0; i < 1000; i++ {
			sink += uint64(i) * sink
		}
	}
}

// TestProfilerWindows records two cells with a real perf: in each sample
// the recording runs before, through and after the window, a thread named
// differently spinning inside it than outside, and each cell's folded
// stacks must hold the window's thread and not what ran around it.
func TestProfilerWindows(t *testing.T) {
	testenv.Root(t)
	testenv.Tool(t, "perf", PerfPackage)
	dir := t.TempDir()
	p, err := Start(filepath.Join(dir, "profiles"), 0)
	if err != nil {
		t.Fatal(err)
	}
	cells := []matrix.Cell{
		{Transport: "kquic", Size: 1024, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1},
		{Transport: "tcp", Size: 1024, MTU: 1500, GSO: true, Crypto: false, Direction: "up", Streams: 1},
	}
	doc := &results.Document{}
	for _, c := range cells {
		doc.Cells = append(doc.Cells, results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK})
	}
	const gap = 50 * time.Millisecond
	for round := 0; round < 2; round++ {
		for _, c := range cells {
			pr := p.Probe(c)
			if err := pr.Start(context.Background()); err != nil {
				p.Finish(doc, dir)
				t.Fatal(err)
			}
			w := pr.(mode.Windowed)
			begin := time.Now().Add(300 * time.Millisecond)
			end := begin.Add(500 * time.Millisecond)
			w.Begin(begin)
			w.End(end)
			// 50 ms idle at each edge: the thread's name changes a little
			// after the instant (milliseconds under emulation).
			spin(t, "kqspin-out", begin.Add(-gap))
			time.Sleep(time.Until(begin))
			spin(t, "kqspin-in", end)
			time.Sleep(gap)
			spin(t, "kqspin-out", end.Add(300*time.Millisecond))
			if _, _, err := pr.Stop(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Finish(doc, dir); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Cells {
		if r.Profile == "" || !strings.Contains(r.ProfileNote, "in 2 windows") {
			t.Fatalf("%s: profile %q (%s)", r.Key, r.Profile, r.ProfileNote)
		}
		f, err := flame.ReadFoldedFile(filepath.Join(dir, r.Profile))
		if err != nil {
			t.Fatal(err)
		}
		if svg, err := os.ReadFile(filepath.Join(dir, r.ProfileSVG)); err != nil || !strings.Contains(string(svg), "<title>kqspin-in (") {
			t.Errorf("%s: flamegraph %q without the spinning thread (%v)", r.Key, r.ProfileSVG, err)
		}
		var inside, outside int64
		for s, n := range f {
			switch {
			case strings.HasPrefix(s, "kqspin-in;"):
				inside += n
			case strings.HasPrefix(s, "kqspin-out;"):
				outside += n
			}
		}
		t.Logf("%s: %s; inside %d, outside %d", r.Key, r.ProfileNote, inside, outside)
		if inside < 20 || outside > 2 {
			for _, s := range f.Stacks() {
				if f[s] > 20 {
					t.Logf("%d %s", f[s], s)
				}
			}
		}
		// A second of spinning in the windows, and none of the 1.1 s
		// outside them (allowing for a sample near an edge). How much of
		// its second the thread got depends on the machine's load (a
		// tenth, with other guests running): 20 samples will do.
		if inside < 20 {
			t.Errorf("%s: %d samples of the thread spinning in the windows, over 1s of them", r.Key, inside)
		}
		if outside > 2 {
			t.Errorf("%s: %d samples of the thread spinning only outside the windows", r.Key, outside)
		}
	}
}

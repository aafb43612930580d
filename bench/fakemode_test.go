//go:build linux

package bench_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// A mode registers its spec side and its measuring: these are the lines.
func init() {
	if err := matrix.RegisterModeSpec("fake", matrix.ModeSpec{About: "made-up samples"}); err != nil {
		panic(err)
	}
	mode.Register(fake)
}

// fake is a mode whose samples are made up, so that the runner's schedule
// can be driven on any machine, without root: cells whose size is in wide
// alternate between two goodputs (a spread over results.MaxSpread), the
// windows listed in steal come back disturbed, and the run is cancelled at
// window cancelAt (counted over the run; 0: never).
var fake = &fakeMode{}

type fakeMode struct {
	mu       sync.Mutex
	wide     map[int]bool
	steal    map[string]bool // "size/window"
	cancelAt int
	cancel   context.CancelFunc
	order    []string // "size/window", as taken
	windows  map[int]int
}

func (f *fakeMode) reset(wide []int, steal ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wide, f.steal = map[int]bool{}, map[string]bool{}
	for _, w := range wide {
		f.wide[w] = true
	}
	for _, s := range steal {
		f.steal[s] = true
	}
	f.cancelAt, f.cancel, f.order, f.windows = 0, nil, nil, map[int]int{}
}

func (*fakeMode) Name() matrix.Mode                                     { return "fake" }
func (*fakeMode) Needs() mode.Needs                                     { return mode.Needs{} }
func (*fakeMode) Check(*mode.Env, matrix.Cell) (results.Status, string) { return "", "" }
func (*fakeMode) Summary(r *results.CellResult) string                  { return mode.GoodputSummary(r) }

func (f *fakeMode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.windows[c.Size]
	if w != i {
		return results.Sample{}, fmt.Errorf("cell %d: the runner asked for window %d, the mode has taken %d", c.Size, i, w)
	}
	f.windows[c.Size]++
	id := fmt.Sprintf("%d/%d", c.Size, w)
	f.order = append(f.order, id)
	if f.cancelAt > 0 && len(f.order) == f.cancelAt {
		f.cancel()
		return results.Sample{}, ctx.Err()
	}
	bps := 100e6 + float64(c.Size)*1e3
	if f.wide[c.Size] && w%2 == 1 {
		bps *= 2
	}
	s := results.Sample{Bytes: 1000, Seconds: 1, Bps: bps, Streams: 1}
	if f.steal[id] {
		s.CPU.StealCores = 0.3
	}
	return s, nil
}

// fakeEnds are the two ends of a run that needs no network: two-host mode
// with nothing behind it.
type fakeClient struct{}

func (fakeClient) Prepare(int, bool) (string, string, error) { return "fake device", "", nil }
func (fakeClient) Do(fn func() error) error                  { return fn() }

type fakeServer struct{}

func (fakeServer) Prepare(context.Context, int, bool) (string, error) { return "fake peer", nil }
func (fakeServer) Available(string) error                             { return nil }
func (fakeServer) Certificate() []byte                                { return nil }
func (fakeServer) Listen(context.Context, string, transport.Options, int) (side.ServerSample, error) {
	return nil, errors.New("the fake mode listens nowhere")
}

// fakeRun runs the fake mode over cells of sizes 1, 2, 3: repeat samples
// each, up to maxRepeat for wide ones, saving to out.
func fakeRun(t *testing.T, ctx context.Context, out string, resume bool, repeat, maxRepeat int) (*results.Document, []int, error) {
	t.Helper()
	spec := matrix.Spec{Mode: "fake", Transports: []string{"tcp"}, Sizes: []int{1, 2, 3}, MTUs: []int{1500},
		GSO: []bool{true}, Crypto: []bool{false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1,
		Time: time.Second, Repeat: repeat, MaxRepeat: maxRepeat}
	var progress []int // done, total after each call
	r := &bench.Runner{Spec: spec, Out: out, Resume: resume, Client: fakeClient{}, Server: fakeServer{}, Topology: "fake",
		Progress: func(done, total int, _ matrix.Cell) {
			if done > total {
				t.Errorf("progress %d of %d", done, total)
			}
			progress = append(progress, done, total)
		}}
	doc, err := r.Run(ctx)
	return doc, progress, err
}

func samplesOf(doc *results.Document) map[int]int {
	n := map[int]int{}
	for _, c := range doc.Cells {
		n[c.Cell.Size] = len(c.Samples)
	}
	return n
}

// TestFakeModeSchedule: the runner's policy, with a registered mode and no
// network: round-robin rounds rotating by one, a disturbed sample set
// aside and taken again at once, extra rounds for the wide cell up to
// MaxRepeat, progress that ends at its total, and every sample saved.
func TestFakeModeSchedule(t *testing.T) {
	fake.reset([]int{3}, "2/1")
	out := filepath.Join(t.TempDir(), "fake.json")
	doc, progress, err := fakeRun(t, context.Background(), out, false, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1/0", "2/0", "3/0", // round 0
		"2/1", "2/2", "3/1", "1/1", // round 1 starts at the second cell; 2/1 was disturbed and taken again
		"3/2", "3/3", "3/4", // the wide cell alone, up to MaxRepeat
	}
	if !slices.Equal(fake.order, want) {
		t.Errorf("windows taken in the order %v, want %v", fake.order, want)
	}
	if got := samplesOf(doc); got[1] != 2 || got[2] != 2 || got[3] != 5 {
		t.Errorf("samples kept %v, want 2, 2 and 5", got)
	}
	for _, c := range doc.Cells {
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s %s", c.Key, c.Status, c.Error)
		}
		if n := len(c.Disturbed); (c.Cell.Size == 2) != (n == 1) || n > 1 {
			t.Errorf("%s: %d samples set aside for steal", c.Key, n)
		}
		if c.Cell.Size == 3 && !c.WideSpread {
			t.Errorf("%s: not wide after alternating goodputs", c.Key)
		}
	}
	if !doc.Complete {
		t.Error("document not complete")
	}
	n := len(progress)
	if n == 0 || progress[n-2] != progress[n-1] || progress[n-1] != len(want) {
		t.Errorf("progress ended at %v, want %d of %d (every window taken)", progress[max(n-2, 0):], len(want), len(want))
	}
	saved, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := samplesOf(saved); got[1] != 2 || got[2] != 2 || got[3] != 5 || !saved.Complete {
		t.Errorf("the file holds %v samples (complete %v)", got, saved.Complete)
	}
}

// TestFakeModeCancelResume: a run cancelled mid-round keeps what it
// measured in its file, and --resume takes only the rest.
func TestFakeModeCancelResume(t *testing.T) {
	fake.reset(nil)
	out := filepath.Join(t.TempDir(), "fake.json")
	ctx, cancel := context.WithCancel(context.Background())
	fake.cancelAt, fake.cancel = 5, cancel // in round 1, after 1/0 2/0 3/0 2/1
	_, _, err := fakeRun(t, ctx, out, false, 3, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	saved, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := samplesOf(saved); got[1] != 1 || got[2] != 2 || got[3] != 1 || saved.Complete {
		t.Fatalf("after the cancel the file holds %v samples (complete %v), want 1, 2, 1 and not complete", got, saved.Complete)
	}
	if _, _, err := fakeRun(t, context.Background(), out, false, 3, 0); !errors.Is(err, bench.ErrExists) {
		t.Errorf("a second run onto the file without resume: %v, want ErrExists", err)
	}
	fake.reset(nil)
	fake.windows = map[int]int{1: 1, 2: 2, 3: 1} // the windows the file has
	doc, progress, err := fakeRun(t, context.Background(), out, true, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := samplesOf(doc); got[1] != 3 || got[2] != 3 || got[3] != 3 || !doc.Complete {
		t.Errorf("resumed run: %v samples (complete %v), want 3 each", got, doc.Complete)
	}
	if len(fake.order) != 5 {
		t.Errorf("resumed run took %v, want the 5 windows missing", fake.order)
	}
	if n := len(progress); n == 0 || progress[n-2] != 9 || progress[n-1] != 9 {
		t.Errorf("resumed progress ended at %v, want 9 of 9", progress[max(n-2, 0):])
	}
}

// TestFakeModeRegistry: the registered mode is what the spec validates
// and the runner finds, and a mode nobody registered is refused by name.
func TestFakeModeRegistry(t *testing.T) {
	if !slices.Contains(mode.Names(), "fake") || !slices.Contains(matrix.Modes(), "fake") {
		t.Errorf("registered modes %v, spec modes %v: no fake", mode.Names(), matrix.Modes())
	}
	for _, m := range matrix.Modes() {
		if _, err := mode.For(m, matrix.Cell{}); err != nil {
			t.Errorf("mode %s has a spec and no measuring: %v", m, err)
		}
	}
	if m, err := mode.For(matrix.DefaultMode(), matrix.Cell{Driver: native.Name}); err != nil || m.Name() != matrix.DefaultMode() {
		t.Errorf("native driver: %v, %v", m, err)
	}
	s := matrix.DefaultSpec()
	s.Mode = "carrier-pigeon"
	if err := s.Validate(); err == nil || !containsAll(err.Error(), "carrier-pigeon", "bulk", "fake") {
		t.Errorf("unknown mode: %v; want the name refused and the modes listed", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

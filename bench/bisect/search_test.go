//go:build linux

package bisect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// history makes a git repository of n commits c1..cn (c0 the good end),
// each writing its number into mod/v, and returns it and the commits'
// hashes, c0 first.
func history(t *testing.T, n int) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.MkdirAll(filepath.Join(repo, "mod"), 0o755)
	var commits []string
	for i := 0; i <= n; i++ {
		os.WriteFile(filepath.Join(repo, "mod", "v"), []byte(fmt.Sprint(i)), 0o644)
		git("add", ".")
		git("commit", "-q", "-m", fmt.Sprintf("c%d", i))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	return repo, commits
}

// fake is a module per commit and what a guest with it measures: the
// figure of each commit, its code (commits of one code are one module),
// and the commits whose build fails or whose samples are noise.
type fake struct {
	commits  []string
	figure   func(i int) float64
	code     func(i int) string
	broken   map[int]bool
	noisy    map[int]bool
	measured map[int]int // rounds run with the commit's module
}

func (f *fake) index(commit string) int {
	for i, c := range f.commits {
		if c == commit {
			return i
		}
	}
	return -1
}

func (f *fake) build(_ context.Context, commit string) (string, string, error) {
	i := f.index(commit)
	if f.broken[i] {
		return "", "", errors.New("make: *** [quic.o] Error 1")
	}
	return fmt.Sprintf("/fake/%d.ko", i), f.code(i), nil
}

// side writes a round of one bulk cell: three samples of the module's
// commit's figure, within 2% (or anywhere from 10 to 200 for a noisy one).
func (f *fake) side(name, module string) ab.Side {
	var i int
	fmt.Sscanf(module, "/fake/%d.ko", &i)
	n := 0
	return ab.Side{Name: name, Run: func(_ context.Context, round int, out string) error {
		f.measured[i]++
		c := matrix.Cell{Transport: "tcp", Size: 16384, MTU: 1500, GSO: true, Direction: "up", Streams: 1}
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		for k := 0; k < 3; k++ {
			n++
			v := f.figure(i) * (1 + 0.02*float64(n%5-2)/2)
			if f.noisy[i] {
				v = []float64{10, 200, 60, 150, 30, 90}[n%6]
			}
			r.Samples = append(r.Samples, results.Sample{Bps: v * 1e6, Bytes: 1e6, Seconds: 1})
		}
		d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Sizes: []int{16384}, Repeat: 3, Streams: 1}, Cells: []results.CellResult{r}}
		return d.Save(out)
	}}
}

func goodput(t *testing.T) ab.JudgeOptions {
	m, err := ab.ParseMetric("goodput")
	if err != nil {
		t.Fatal(err)
	}
	return ab.JudgeOptions{Metric: m, Threshold: 0.2}
}

// TestSearch: over ten commits where c6 halves the figure, c5 has the good
// end's code (it left the module alone) and c7 does not build, the
// bisection judges c5 good unmeasured, skips c7, finds c6, and says each
// step in a git bisect log with its evidence.
func TestSearch(t *testing.T) {
	repo, commits := history(t, 10)
	f := &fake{commits: commits, broken: map[int]bool{7: true}, noisy: map[int]bool{}, measured: map[int]int{},
		figure: func(i int) float64 {
			if i >= 6 {
				return 50
			}
			return 100
		},
		code: func(i int) string {
			if i == 5 {
				return "code0"
			}
			return fmt.Sprintf("code%d", i)
		}}
	dir := t.TempDir()
	res, err := Run(context.Background(), Options{Src: filepath.Join(repo, "mod"), Good: commits[0], Bad: commits[10],
		Side: f.side, Judge: goodput(t), Rounds: 2, MaxRounds: 4, Dir: dir, build: f.build})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Log)
	if res.FirstBad != commits[6] {
		t.Fatalf("first bad %q, want c6 %s", res.FirstBad, commits[6])
	}
	if res.BadEnd.Outcome != Bad || res.BadEnd.Judgement == nil || res.BadEnd.Judgement.Verdict != ab.Worse {
		t.Errorf("the bad end: %+v", res.BadEnd)
	}
	var got []string
	for _, s := range res.Steps {
		got = append(got, fmt.Sprintf("c%d %s", f.index(s.Commit), s.Outcome))
		if !strings.Contains(res.Log, "git bisect "+string(s.Outcome)+" "+s.Commit+"\n") {
			t.Errorf("the log lacks step %s's line", s.Commit)
		}
	}
	if strings.Join(got, ", ") != "c5 good, c7 skip, c6 bad" {
		t.Errorf("steps %s, want c5 good, c7 skip, c6 bad", strings.Join(got, ", "))
	}
	if f.measured[5] != 0 || res.Steps[0].Judgement != nil || !strings.Contains(res.Steps[0].Why, "module code code0, as a good commit's: not measured") {
		t.Errorf("c5, of the good end's code, was measured %d rounds: %s", f.measured[5], res.Steps[0].Why)
	}
	if s := res.Steps[1]; !strings.HasPrefix(s.Why, "the build failed: make: *** [quic.o] Error 1") {
		t.Errorf("c7: %s", s.Why)
	}
	if s := res.Steps[2]; s.Rounds != 2 || s.Judgement == nil || len(s.Judgement.Cells) != 1 || s.Judgement.Cells[0].PWorse >= 0.05 {
		t.Errorf("c6: %d rounds, %+v", s.Rounds, s.Judgement)
	}
	if !strings.HasPrefix(res.Log, "# kqbench bisect of ") || !strings.Contains(res.Log, "git bisect start "+commits[10]+" "+commits[0]+"\n") ||
		!strings.Contains(res.Log, "git bisect bad "+commits[10]+"\n") || !strings.Contains(res.Log, "# first bad commit: ["+commits[6]+"] c6\n") {
		t.Errorf("log:\n%s", res.Log)
	}
	for _, name := range []string{"bisect.json", "bisect.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestSearchSkipsLeaveCandidates: c4 halves the figure; c3 does not build
// and c4's samples are noise that no number of rounds decides: both are
// skipped (c4 after the most rounds), and the answer is the commits the
// first bad one is among.
func TestSearchSkipsLeaveCandidates(t *testing.T) {
	repo, commits := history(t, 6)
	f := &fake{commits: commits, broken: map[int]bool{3: true}, noisy: map[int]bool{4: true}, measured: map[int]int{},
		figure: func(i int) float64 {
			if i >= 4 {
				return 50
			}
			return 100
		},
		code: func(i int) string { return fmt.Sprintf("code%d", i) }}
	res, err := Run(context.Background(), Options{Src: filepath.Join(repo, "mod"), Good: commits[0], Bad: commits[6],
		Side: f.side, Judge: goodput(t), Rounds: 2, MaxRounds: 5, Dir: t.TempDir(), build: f.build})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res.Log)
	if res.FirstBad != "" || strings.Join(res.Candidates, " ") != strings.Join(commits[3:6], " ") {
		t.Errorf("first bad %q, candidates %q; want none, and c3 c4 c5", res.FirstBad, res.Candidates)
	}
	if f.measured[4] != 5 {
		t.Errorf("c4, noise, was measured %d rounds, want the most (5: 2, 2, then 1)", f.measured[4])
	}
	for _, s := range res.Steps {
		if f.index(s.Commit) == 4 && (s.Outcome != Skip || s.Rounds != 5 || !strings.HasPrefix(s.Why, "undecided after the most rounds")) {
			t.Errorf("c4: %s after %d rounds: %s", s.Outcome, s.Rounds, s.Why)
		}
	}
}

// TestNothingMoved: a bad end as good as the good end ends the run at
// once, saying so; one that cannot be told from it ends it too, saying
// that instead; a range whose ends are the wrong way round is refused.
func TestNothingMoved(t *testing.T) {
	repo, commits := history(t, 4)
	f := &fake{commits: commits, noisy: map[int]bool{}, measured: map[int]int{},
		figure: func(int) float64 { return 100 }, code: func(i int) string { return fmt.Sprintf("code%d", i) }}
	res, err := Run(context.Background(), Options{Src: filepath.Join(repo, "mod"), Good: commits[0], Bad: commits[4],
		Side: f.side, Judge: goodput(t), Rounds: 2, Dir: t.TempDir(), build: f.build})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NothingMoved || res.FirstBad != "" || len(res.Steps) != 0 || !strings.Contains(res.Log, "# nothing moved beyond the threshold") {
		t.Errorf("%+v", res)
	}
	// A bad end that no number of rounds tells from the good end: nothing
	// to bisect, and not "nothing moved".
	f.noisy[4] = true
	res, err = Run(context.Background(), Options{Src: filepath.Join(repo, "mod"), Good: commits[0], Bad: commits[4],
		Side: f.side, Judge: goodput(t), Rounds: 2, MaxRounds: 4, Dir: t.TempDir(), build: f.build})
	if err != nil {
		t.Fatal(err)
	}
	if res.NothingMoved || !res.BadEndUndecided || res.BadEnd.Rounds != 4 || !strings.Contains(res.Log, "# nothing to bisect: the bad end could not be judged") {
		t.Errorf("an undecided bad end: %+v", res)
	}
	if _, err := Run(context.Background(), Options{Src: filepath.Join(repo, "mod"), Good: commits[4], Bad: commits[0],
		Side: f.side, Judge: goodput(t), Dir: t.TempDir(), build: f.build}); err == nil || !strings.Contains(err.Error(), "is not an ancestor") {
		t.Errorf("a reversed range: %v", err)
	}
}

// TestPick: the middle first, then its neighbours where skipped.
func TestPick(t *testing.T) {
	if i, ok := pick(-1, 9, nil); !ok || i != 4 {
		t.Errorf("pick(-1, 9) = %d, %v", i, ok)
	}
	if i, ok := pick(-1, 9, map[int]bool{4: true}); !ok || i != 3 {
		t.Errorf("pick with 4 skipped = %d", i)
	}
	if _, ok := pick(3, 4, nil); ok {
		t.Error("picked between neighbours")
	}
	if _, ok := pick(2, 5, map[int]bool{3: true, 4: true}); ok {
		t.Error("picked a skipped commit")
	}
}

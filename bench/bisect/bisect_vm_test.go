//go:build linux

package bisect_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench/ab"
	"kquic.dev/bench/bisect"
	"kquic.dev/internal/testenv"
)

// testHistory scripts a git history of the project's test module
// (testdata/kqtestmod) in a temporary repository, its commits c0..c5:
//
//	c0  the module as it is (the good end)
//	c1  a README beside it (the module's code unchanged)
//	c2  /proc/kqtestmod says 43 (the code changes, the figure does not)
//	c3  the planted commit: the netfilter hook spends 1 ms of busy CPU
//	    per KiB of every outgoing packet, which caps the guest's TCP
//	    goodput, as kqbench matrix measures it, near 5 Mbit/s whatever
//	    else the machine does (a busy wait lasts its time however little
//	    CPU the guest gets)
//	c4  /proc/kqtestmod says 44 (the bad end)
//	c5  a syntax error: the module does not build
//
// The files are the same in every run, so their git trees, and the module
// cache's keys, are too: a warm cache builds nothing.
func testHistory(t *testing.T) (string, []string) {
	t.Helper()
	testenv.Tool(t, "git", "git")
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=kquic test", "-c", "user.email=test@kquic.dev", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	src := filepath.Join("..", "..", "testdata", "kqtestmod")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	c := read("kqtestmod.c")
	files := map[string]string{"Kbuild": read("Kbuild"), "kqtestmod.c": c}
	edit := func(old, new string) {
		t.Helper()
		if !strings.Contains(files["kqtestmod.c"], old) {
			t.Fatalf("testdata/kqtestmod/kqtestmod.c has no %q to change", old)
		}
		files["kqtestmod.c"] = strings.Replace(files["kqtestmod.c"], old, new, 1)
	}
	git("init", "-q", "-b", "main")
	var commits []string
	commit := func(msg string) {
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", ".")
		git("commit", "-q", "-m", msg)
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	commit("kqtestmod: a proc file and a netfilter hook")
	files["README"] = "kquic's test module\n"
	commit("kqtestmod: a README")
	edit("kqtestmod_value = 42;", "kqtestmod_value = 43;")
	commit("kqtestmod: say 43")
	edit("cost_ns_per_kb = 0;", "cost_ns_per_kb = 1000000;")
	commit("kqtestmod: account for every KiB sent")
	edit("kqtestmod_value = 43;", "kqtestmod_value = 44;")
	commit("kqtestmod: say 44")
	edit("return NF_ACCEPT;", "return NF_ACCEPT")
	commit("kqtestmod: drop a semicolon")
	return repo, commits
}

// cellFlags are the cell and rounds of the tests' A/Bs: TCP (which the test
// module's hook slows; no QUIC module needed), 16 KiB, two rounds a side
// of three 1 s samples, six samples a side. The planted commit takes the
// cell to about 4 Mbit/s, where the module without it moves 40 to 700
// under TCG on 2 cores shared with other work (the spread of the samples
// of one guest, within seconds, on a machine 8 times oversubscribed); the
// threshold is 75%, so that such a spread does not make the same module
// look worse, and the planted commit is still far beyond it.
var cellFlags = []string{"--transport", "tcp", "--crypto", "off", "--size", "16K",
	"--rounds", "2", "--repeat", "3", "--time", "1s", "--threshold", "75%"}

// abCellFlags are cellFlags as kqbench ab spells them (it takes lists).
func abCellFlags() []string {
	out := append([]string(nil), cellFlags...)
	for i, f := range out {
		switch f {
		case "--transport", "--size":
			out[i] = f + "s"
		}
	}
	return out
}

// TestBisectFindsPlantedCommit runs kqbench bisect over the scripted
// history: the bad end against the good end, then each step A/B'd against
// the good end in guests, the figure TCP goodput measured by kqbench
// matrix in the guest; it must name c3, with the evidence. About 3 minutes
// on 2 cores under TCG with the module cache warm: three A/Bs of four
// rounds (the bad end, c2, c3), five guest boots, no build.
func TestBisectFindsPlantedCommit(t *testing.T) {
	cfg := testenv.VM(t)
	testenv.ModuleBuildRoot(t)
	repo, c := testHistory(t)
	dir := t.TempDir()
	args := append([]string{"bisect", "--src", repo, "--good", c[0], "--bad", c[4], "--max-rounds", "6", "--dir", dir}, cellFlags...)
	start := time.Now()
	out, err := exec.Command(cfg.Init, args...).CombinedOutput()
	t.Logf("kqbench %s: %v, %s\n%s", strings.Join(args, " "), err, time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("kqbench bisect: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bisect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res bisect.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.FirstBad != c[3] {
		t.Fatalf("first bad commit %q, want the planted c3 %s", res.FirstBad, c[3])
	}
	if j := res.BadEnd.Judgement; j == nil || j.Verdict != ab.Worse || j.Cells[0].PWorse >= 0.05 || j.Cells[0].ChangePct > -50 {
		t.Errorf("the bad end's evidence: %+v", res.BadEnd)
	}
	for _, s := range res.Steps {
		want := bisect.Good
		if s.Commit == c[3] || s.Commit == c[4] {
			want = bisect.Bad
		}
		if s.Outcome != want {
			t.Errorf("step %s: %s, want %s (%s)", s.Commit, s.Outcome, want, s.Why)
		}
		if s.Judgement == nil && s.Commit != c[1] {
			t.Errorf("step %s was not measured: %s", s.Commit, s.Why)
		}
	}
	if !strings.Contains(string(out), "first bad commit: "+c[3]) || !strings.Contains(res.Log, "# first bad commit: ["+c[3]+"] kqtestmod: account for every KiB sent\n") {
		t.Errorf("the answer is not in the output and the log:\n%s", res.Log)
	}
}

// TestABExitCode runs kqbench ab --exit-code from source refs of the
// scripted history, as git bisect run would: the planted commit against
// the good end exits 1, a commit that changed the code but not the figure
// 0, and one whose module does not build 125 (git bisect run's skip; an
// undecided verdict exits 125 the same way, TestJudge has those). About
// 2 minutes under TCG: two A/Bs of four rounds, four guest boots.
func TestABExitCode(t *testing.T) {
	cfg := testenv.VM(t)
	testenv.ModuleBuildRoot(t)
	repo, c := testHistory(t)
	for _, tc := range []struct {
		name  string
		b     string
		extra []string
		want  int
	}{
		{"planted", c[3], nil, 1},
		{"harmless", c[2], nil, 0},
		{"does not build", c[5], nil, 125},
	} {
		args := append([]string{"ab", "--exit-code", "--a-module", "src:" + repo + "@" + c[0], "--b-module", "src:" + repo + "@" + tc.b,
			"--dir", t.TempDir()}, abCellFlags()...)
		args = append(args, tc.extra...)
		start := time.Now()
		cmd := exec.Command(cfg.Init, args...)
		out, err := cmd.CombinedOutput()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		verdict := out[strings.LastIndex(string(out), "\nverdict ")+1:]
		t.Logf("%s: kqbench %s: exit %d, %s\n%s", tc.name, strings.Join(args, " "), code, time.Since(start).Round(time.Second), verdict)
		if code != tc.want {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.want, out)
		}
		switch tc.want {
		case 125:
			if !strings.Contains(string(out), "kqbench: ab: src:"+repo+"@"+tc.b+": build of ") {
				t.Errorf("%s: the failed build is not named\n%s", tc.name, out)
			}
		default:
			if !strings.Contains(string(out), fmt.Sprintf("\nverdict %s: B against A on goodput", map[int]string{0: "same", 1: "worse"}[tc.want])) {
				t.Errorf("%s: no verdict printed\n%s", tc.name, out)
			}
		}
	}
}

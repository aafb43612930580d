package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"kquic.dev/internal/testenv"
)

// TestSummarize runs go test -json on testdata/hang, whose tests pass,
// fail and hang past -timeout, and checks the summary: the counts, the
// failed test's output, the hung test's panic and goroutines (go test
// reports no end for it), and the FAILED lines that name both last.
func TestSummarize(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on testdata/hang, which waits out a 3 s timeout")
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "-timeout", "3s", "./testdata/hang")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	events, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("go test ./testdata/hang: %v (want its tests to fail)", err)
	}
	var w bytes.Buffer
	c, failed, err := summarize(bytes.NewReader(events), &w)
	if err != nil || !failed {
		t.Fatalf("summarize: failed %v, %v; want failed", failed, err)
	}
	out := w.String()
	if c.Ran != 2 || c.Passed != 1 || c.Failed != 1 {
		t.Errorf("counts %+v, want 2 ran (the hung test has no end), 1 passed, 1 failed", c)
	}
	for _, want := range []string{"fails as it should", "panic: test timed out after 3s", "hang.TestHangs("} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	const pkg = "kquic.dev/scripts/testsummary/testdata/hang"
	want := []string{pkg + ".TestFails", pkg + ".TestHangs did not end: panic: test timed out after 3s", pkg + " failed"}
	if strings.Join(c.failures, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(c.failures, "\n"), strings.Join(want, "\n"))
	}
}

// TestModuleCounts: of the tests that reached the module, a skip that is a
// known module bug's verdict counts as that, any other as a skip, which
// -require-module refuses.
func TestModuleCounts(t *testing.T) {
	ev := func(action, test, output string) string {
		b, _ := json.Marshal(event{Action: action, Package: "p", Test: test, Output: output})
		return string(b) + "\n"
	}
	in := ev("output", "TestPass", testenv.QUICMarker+"\n") + ev("pass", "TestPass", "") +
		ev("output", "TestBug", testenv.QUICMarker+"\n") + ev("output", "TestBug", "    x.go:1: "+testenv.KnownBugMarker+" (expected failure on module build b): ...\n") + ev("skip", "TestBug", "") +
		ev("output", "TestSkipped", testenv.QUICMarker+"\n") + ev("output", "TestSkipped", "    x.go:2: host only\n") + ev("skip", "TestSkipped", "") +
		ev("output", "TestNoModule", "    x.go:3: no tool\n") + ev("skip", "TestNoModule", "") +
		ev("pass", "", "")
	c, failed, err := summarize(strings.NewReader(in), io.Discard)
	if err != nil || failed {
		t.Fatalf("summarize: failed %v, %v", failed, err)
	}
	if c.Ran != 4 || c.Skipped != 3 || c.Module != 3 ||
		strings.Join(c.ModuleKnownBugs, ",") != "p.TestBug" || strings.Join(c.ModuleSkipped, ",") != "p.TestSkipped" {
		t.Errorf("counts %+v", c)
	}
	want := "against the QUIC module: 3, 1 of them skipped: p.TestSkipped; 1 known module bugs reproduced (expected failures): p.TestBug"
	if l := line(c); !strings.Contains(l, want) {
		t.Errorf("line %q, want it to hold %q", l, want)
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
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

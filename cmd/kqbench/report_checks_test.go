package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/conformance"
	"kquic.dev/fuzz"
	"kquic.dev/interop"
	"kquic.dev/kmod/kcov"
)

func TestReportCheckResults(t *testing.T) {
	dir := t.TempDir()
	io := filepath.Join(dir, "interop.json")
	(&interop.Document{Schema: interop.Schema, Results: []interop.Result{
		{Server: "kquic", Client: "quic-go", Case: "retry", Status: interop.Pass},
		{Server: "kquic", Client: "quic-go", Case: "zerortt", Status: interop.Fail, Reason: "0-RTT: no 0-RTT packet"},
	}}).Save(io)
	cf := filepath.Join(dir, "conformance.json")
	(&conformance.Report{Schema: conformance.Schema, Target: "kquic", Results: []conformance.Result{
		{Rule: "stream-truncated", Role: conformance.Server, Section: "12.4", Want: []string{"FRAME_ENCODING_ERROR"}, Verdict: conformance.Silent},
	}}).Save(cf)
	fz := filepath.Join(dir, "fuzz.json")
	(&fuzz.Report{Schema: fuzz.Schema, Target: "kquic", Inputs: 1200, Findings: []fuzz.Finding{{Oracle: "kernel-log", Detail: "WARNING: x", After: 7}},
		Coverage: &kcov.Coverage{Module: "quic", File: "/x/quic.ko", Points: 100, Reached: 40, Lines: 80, LinesReached: 30, FunctionsReached: 1, FunctionsInstrumented: 2,
			ThreadsTraced: 9, Threads: 9,
			Functions: []kcov.Function{{Name: "quic_sendmsg", File: "/b/net/quic/socket.c", Line: 10, Points: 10, Reached: 4}, {Name: "quic_frame_ack_process", File: "/b/net/quic/frame.c", Line: 20, Points: 5}},
			Files:     []kcov.FileLines{{File: "/b/net/quic/socket.c", Reached: []int{1, 2}, Unreached: []int{3}}}}}).Save(fz)
	page := filepath.Join(dir, "page.html")
	cmd := newReportCmd()
	var out, errs bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errs)
	cmd.SetArgs([]string{io, cf, fz, "--html", page})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0-RTT: no 0-RTT packet", "stream-truncated", "NO (silent)", "1200 inputs", "finding 1 (kernel-log) after input 7",
		"40 of 100 coverage points (40.0%), 30 of 80 source lines", "net/quic/socket.c               2 of    3 lines"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="fail" title="zerortt: fail: 0-RTT: no 0-RTT packet"`, `<tr class="silent">`, "finding (kernel-log) after input 7",
		"<td>quic_sendmsg</td><td>/b/net/quic/socket.c:10</td><td>4</td><td>10</td>", `<tr class="silent"><td>quic_frame_ack_process</td>`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A matrix results file beside them is refused with a clear error.
	cmd = newReportCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errs)
	matrix := filepath.Join(dir, "m.json")
	os.WriteFile(matrix, []byte(`{"schema":"kqbench.matrix/v1"}`), 0o644)
	cmd.SetArgs([]string{io, matrix})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("mixed files: %v", err)
	}
}

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
	(&fuzz.Report{Schema: fuzz.Schema, Target: "kquic", Inputs: 1200, Findings: []fuzz.Finding{{Oracle: "kernel-log", Detail: "WARNING: x", After: 7}}}).Save(fz)
	page := filepath.Join(dir, "page.html")
	cmd := newReportCmd()
	var out, errs bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errs)
	cmd.SetArgs([]string{io, cf, fz, "--html", page})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0-RTT: no 0-RTT packet", "stream-truncated", "NO (silent)", "1200 inputs", "finding 1 (kernel-log) after input 7"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="fail" title="zerortt: fail: 0-RTT: no 0-RTT packet"`, `<tr class="silent">`, "finding (kernel-log) after input 7"} {
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

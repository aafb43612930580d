package interop

import (
	"slices"
	"strings"
	"testing"

	"kquic.dev/kmod/knownbugs"
)

// Diff names the cells whose status changed, a case run in one only, and a
// repeated case by all its statuses; the same results are "no change".
func TestDiff(t *testing.T) {
	a := []Result{
		{Server: "kquic", Client: "quic-go", Case: "handshake", Status: Pass},
		{Server: "kquic", Client: "quic-go", Case: "zerortt", Status: KnownBug, Reason: "early-stream-id"},
		{Server: "quic-go", Client: "kquic", Case: "retry", Status: Pass},
		{Server: "quic-go", Client: "kquic", Case: "transfer", Status: Pass},
		{Server: "quic-go", Client: "kquic", Case: "transfer", Status: Pass},
		{Server: "kquic", Client: "kquic", Case: "v2", Status: Pass},
	}
	var w strings.Builder
	WriteDiff(&w, "code:a", "code:a", a, slices.Clone(a))
	if !strings.HasPrefix(w.String(), "no change") {
		t.Errorf("the same results: %q", w.String())
	}
	b := slices.Clone(a[:5])
	b[1] = Result{Server: "kquic", Client: "quic-go", Case: "zerortt", Status: Pass}
	b[4] = Result{Server: "quic-go", Client: "kquic", Case: "transfer", Status: Fail, Reason: "the client failed: boom"}
	b = append(b, Result{Server: "kquic", Client: "kquic", Case: "keyupdate", Status: Pass})
	got := Diff(a, b)
	var keys []string
	for _, c := range got {
		keys = append(keys, c.Server+"/"+c.Client+"/"+c.Case)
	}
	want := []string{"kquic/quic-go/zerortt", "quic-go/kquic/transfer", "kquic/kquic/keyupdate", "kquic/kquic/v2"}
	if !slices.Equal(keys, want) {
		t.Fatalf("Diff changed %v, want %v", keys, want)
	}
	if got[1].B.Status != Fail || got[2].A != nil || got[3].B != nil {
		t.Errorf("changes %+v", got)
	}
	w.Reset()
	WriteDiff(&w, "code:a", "code:b", a, b)
	for _, s := range []string{"4 case(s) changed", "known-bug → pass", "pass → fail", "the client failed: boom", "not run → pass", "pass → not run"} {
		if !strings.Contains(w.String(), s) {
			t.Errorf("WriteDiff has no %q:\n%s", s, w.String())
		}
	}
}

// Rejudge gives an earlier run's failures the verdicts of the list as it
// is: on a build known to have the bug, known-bug; on another, a failure
// that names the bug it looks like; twice, the same.
func TestRejudge(t *testing.T) {
	reason := "the client failed: connection 2: /f2: kquic: open stream: invalid argument"
	res := []Result{
		{Server: "quic-go", Client: "kquic", Case: "zerortt", Status: Fail, Reason: reason, Module: knownbugs.Build03a9c7c},
		{Server: "quic-go", Client: "kquic", Case: "zerortt", Status: Fail, Reason: reason, Module: "code:0123"},
		{Server: "quic-go", Client: "quic-go", Case: "zerortt", Status: Fail, Reason: reason},
		{Server: "kquic", Client: "quic-go", Case: "zerortt", Status: Fail, Reason: reason, Module: knownbugs.Build03a9c7c},
	}
	kernel := func(n string) bool { return n == "kquic" }
	for range 2 {
		Rejudge(res, kernel)
		if r := res[0]; r.Status != KnownBug || !strings.HasPrefix(r.KnownBug, "early-stream-id:") || r.Reason != reason {
			t.Errorf("on 03a9c7c: %s, %q, %q", r.Status, r.KnownBug, r.Reason)
		}
		if r := res[1]; r.Status != Fail || !strings.Contains(r.Reason, "looks like known module bug early-stream-id") || strings.Count(r.Reason, "looks like") != 1 {
			t.Errorf("on another build: %s, %q", r.Status, r.Reason)
		}
		if r := res[2]; r.Status != Fail || r.KnownBug != "" {
			t.Errorf("without kernel QUIC: %s, %q", r.Status, r.KnownBug)
		}
		if r := res[3]; r.Status != Fail || r.KnownBug != "" {
			t.Errorf("the kernel serving, a client's bug: %s, %q", r.Status, r.KnownBug)
		}
	}
}

package interop

import (
	"slices"
	"strings"
	"testing"
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

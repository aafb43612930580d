//go:build linux

package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"kquic.dev/bench/side"
)

// counterOp is a test mode's operations: "count-add" adds n to the
// session's count and answers it with the server's address; "count-fail"
// answers the count and an error.
type counterOp struct {
	s     side.Session
	count int
}

var counterStops atomic.Int32

func (o *counterOp) Handle(name string, req json.RawMessage) (any, error) {
	var q struct {
		N int `json:"n"`
	}
	if err := json.Unmarshal(req, &q); err != nil {
		return nil, err
	}
	o.count += q.N
	type answer struct {
		Count int        `json:"count"`
		Addr  netip.Addr `json:"addr"`
	}
	if name == "count-fail" {
		return answer{Count: o.count}, errors.New("count-fail fails")
	}
	return answer{Count: o.count, Addr: o.s.Addr()}, nil
}

func (o *counterOp) Stop() { counterStops.Add(1) }

func init() {
	side.RegisterOp([]string{"count-add", "count-fail"}, func(s side.Session) side.Op { return &counterOp{s: s} })
}

// TestRegisteredOp: an operation a mode registers is answered by its
// session's server side, whose state lasts the session; its answer's
// fields come back with an error where it has one; a new sample and the
// session's end stop it.
func TestRegisteredOp(t *testing.T) {
	h := newHosts(t, nil)
	c, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var a struct {
		Count int        `json:"count"`
		Addr  netip.Addr `json:"addr"`
	}
	for i, want := range []int{2, 5} {
		if err := c.Call(ctx, "count-add", struct {
			N int `json:"n"`
		}{2 + i}, &a); err != nil {
			t.Fatal(err)
		}
		if a.Count != want || a.Addr != c.PeerAddr() {
			t.Errorf("call %d: answer %+v, want count %d at %v", i, a, want, c.PeerAddr())
		}
	}
	a.Count = 0
	if err := c.Call(ctx, "count-fail", nil, &a); err == nil || err.Error() != "count-fail fails" || a.Count != 5 {
		t.Errorf("count-fail: %v, answer %+v", err, a)
	}
	stops := counterStops.Load()
	if err := c.Call(ctx, "stop", nil, nil); err != nil {
		t.Fatal(err)
	}
	if counterStops.Load() != stops+1 {
		t.Errorf("a stop did not stop the op")
	}
	if err := c.Call(ctx, "count-nosuch", nil, nil); err == nil {
		t.Error("an operation nobody registered was answered")
	}
	c.Close()
	h.log.waitFor(t, "restored")
	if counterStops.Load() != stops+2 {
		t.Errorf("the session's end did not stop the op")
	}
}

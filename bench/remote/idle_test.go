//go:build linux

package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestIdleCutOff: a client that logs in and goes silent keeps the server
// busy (a second client is told so at once, not kept waiting) until the
// idle limit; then it is cut off with a message that says why, the device
// is restored, and the next client is served.
func TestIdleCutOff(t *testing.T) {
	h := newHosts(t, nil)
	const limit = 2 * time.Second
	h.srv.SetIdleLimit(limit)
	silent, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	h.log.waitFor(t, "started")

	start := time.Now()
	_, err = h.dial(t, Config{Token: token})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "a session silent for 2s is cut off") {
		t.Errorf("second client while the first is silent: %v, want busy with the idle limit", err)
	}
	if d := time.Since(start); d > limit {
		t.Errorf("the second client waited %v to be told the server is busy", d)
	}

	h.log.waitFor(t, "cut off: no request for 2s (the idle limit: 2s (kqbench server --idle))")
	h.log.waitFor(t, "kqb1 restored")
	if d := time.Since(start); d < limit/2 {
		t.Errorf("cut off after %v, before the limit of %v", d, limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = silent.Prepare(ctx, 1500, true)
	if !errors.Is(err, ErrCutOff) || !strings.Contains(err.Error(), "no request for 2s") || !strings.Contains(err.Error(), "puts kqb1 back") {
		t.Errorf("the silent client's next request: %v, want the cut-off message", err)
	}
	t.Logf("the silent client's next request: %v", err)

	next, err := h.dial(t, Config{Token: token})
	if err != nil {
		t.Fatalf("the next client after the cut-off: %v", err)
	}
	defer next.Close()
	if _, err := next.Prepare(ctx, 1500, true); err != nil {
		t.Errorf("the next client's prepare: %v", err)
	}
}

// TestIdleLimitFollowsSample: without a fixed limit, a session may stay
// silent for its client's sample time plus IdleMargin.
func TestIdleLimitFollowsSample(t *testing.T) {
	s := &Server{}
	if got := s.idleLimit(0); got != IdleMargin {
		t.Errorf("no sample time: %v, want %v", got, IdleMargin)
	}
	if got := s.idleLimit(10 * time.Minute); got != 10*time.Minute+IdleMargin {
		t.Errorf("10m samples: %v", got)
	}
	s.SetIdleLimit(time.Second)
	if got := s.idleLimit(10 * time.Minute); got != time.Second {
		t.Errorf("--idle 1s: %v", got)
	}
}

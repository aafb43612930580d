//go:build linux

package kquic

import (
	"context"
	"io"
	"testing"
	"time"

	"kquic.dev/internal/quicabi"
)

// waitFor polls cond (over a scripted kernel nothing signals the test).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func queued(c *Conn) (bidi, uni int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.acceptQ[0].items), len(c.acceptQ[1].items)
}

// TestAcceptQueueBound: the peer's streams the application has not
// accepted stop at the stream limit this side advertises; then the
// connection leaves the rest in the kernel (which keeps the peer's credit)
// rather than dropping anything, and receives again as Accept takes them.
// Over a scripted kernel: the peer (a server) sends ten times the limit of
// empty unidirectional streams, each only a FIN.
func TestAcceptQueueBound(t *testing.T) {
	const limit = 4
	c, k := newFakeConnParams(t, true, quicabi.TransportParam{MaxStreamsUni: limit, MaxStreamsBidi: 50})
	if c.acceptMax != [2]int{50, limit} {
		t.Fatalf("accept queue bounds %v, want the advertised limits [50 %d]", c.acceptMax, limit)
	}
	const n = 10 * limit
	for i := range n {
		k.deliver(int64(4*i+3), "", true) // server-initiated unidirectional
	}
	waitFor(t, "a full queue", func() bool { _, u := queued(c); return u == limit })
	time.Sleep(50 * time.Millisecond) // time to read on, were the bound not kept
	if _, u := queued(c); u != limit || k.pending() != n-limit {
		t.Fatalf("%d streams queued and %d left in the kernel, want %d and %d", u, k.pending(), limit, n-limit)
	}
	// A bidirectional stream's data behind them waits too.
	k.deliver(1, "bidi", true)
	time.Sleep(20 * time.Millisecond)
	if b, _ := queued(c); b != 0 {
		t.Fatalf("a bidirectional stream was received past a full unidirectional queue")
	}
	// Accepting one lets one more in.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.AcceptUniStream(ctx)
	if err != nil || r.StreamID() != 3 {
		t.Fatalf("AcceptUniStream: %v, %v; want stream 3", r, err)
	}
	waitFor(t, "the next stream", func() bool { return k.pending() == n-limit })
	if _, u := queued(c); u != limit {
		t.Fatalf("%d queued after one Accept, want %d", u, limit)
	}
	// Every stream arrives, in order, each with its FIN; so does the
	// bidirectional one.
	for i := range n {
		if i > 0 {
			if r, err = c.AcceptUniStream(ctx); err != nil {
				t.Fatalf("accept stream %d of %d: %v", i, n, err)
			}
		}
		if want := int64(4*i + 3); r.StreamID() != want {
			t.Fatalf("accepted stream %d, want %d", r.StreamID(), want)
		}
		if b, err := io.ReadAll(r); len(b) != 0 || err != nil {
			t.Fatalf("stream %d: read %q, %v; want an empty stream", r.StreamID(), b, err)
		}
	}
	s, err := c.AcceptStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(s); string(b) != "bidi" || err != nil {
		t.Fatalf("bidirectional stream: %q, %v", b, err)
	}
}

// TestAcceptQueueBoundDefault: without the kernel's word on the limits the
// bound is its default of 100.
func TestAcceptQueueBoundDefault(t *testing.T) {
	c, _ := newFakeConn(t, true)
	if c.acceptMax != [2]int{defaultAcceptMax, defaultAcceptMax} {
		t.Fatalf("accept queue bounds %v, want %d", c.acceptMax, defaultAcceptMax)
	}
}

//go:build linux

package kquic_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// TestAcceptQueueHoldsThePeer: a peer that opens ten times its
// unidirectional stream limit of empty streams (each only a FIN) while the
// application accepts none costs the connection at most the limit of
// Streams: with the accept queue at the limit it stops reading, and the
// rest wait in the kernel. Nothing is lost: once the application accepts,
// every stream arrives. Whether the peer is held too is the module's: on
// lxin/quic 03a9c7c it is not, as the kernel gives a unidirectional
// stream's credit back when its FIN arrives, read or not (logged).
func TestAcceptQueueHoldsThePeer(t *testing.T) {
	const limit = 4
	const n = 10 * limit
	cli, srv := pair(t, nil, &kquic.Config{Transport: kquic.TransportParameters{MaxStreamsUni: limit}})
	if _, _, _, maxUni := kquic.AcceptQueued(srv); maxUni != limit {
		t.Fatalf("the unidirectional accept queue's bound is %d, want the limit %d", maxUni, limit)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opened atomic.Int64
	done := make(chan error, 1)
	go func() {
		for range n {
			u, err := cli.OpenUniStreamSync(ctx)
			if err != nil {
				done <- err
				return
			}
			if err := u.Close(); err != nil {
				done <- err
				return
			}
			opened.Add(1)
		}
		done <- nil
	}()
	// Wait until the client stops getting streams: a second without one.
	last := int64(-1)
	for deadline := time.Now().Add(30 * time.Second); ; {
		time.Sleep(time.Second)
		got := opened.Load()
		if got == last || got == n || time.Now().After(deadline) {
			last = got
			break
		}
		last = got
	}
	_, uni, _, _ := kquic.AcceptQueued(srv)
	kept := kquic.StreamsKept(srv)
	t.Logf("with none accepted: the client opened %d of %d streams (the kernel's credit), the server queued %d and keeps %d Streams", last, n, uni, kept)
	if uni > limit || kept > limit {
		t.Errorf("the server queued %d streams and keeps %d, more than the limit of %d", uni, kept, limit)
	}
	// Accept them all, then read each: while the queue is full the
	// connection reads nothing, a stream's FIN included (AcceptStream's
	// doc), so a stream is read to its end once the streams queued behind
	// it are taken.
	var streams []*kquic.ReceiveStream
	for i := range n {
		r, err := srv.AcceptUniStream(ctxT(t))
		if err != nil {
			t.Fatalf("accept stream %d of %d: %v", i, n, err)
		}
		streams = append(streams, r)
	}
	for _, r := range streams {
		r.SetReadDeadline(time.Now().Add(20 * time.Second))
		if b, err := io.ReadAll(r); len(b) != 0 || err != nil {
			t.Fatalf("stream %d: read %q, %v; want an empty stream", r.StreamID(), b, err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the client's opens: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the client opened %d of %d streams, all accepted", opened.Load(), n)
	}
	// The connection goes on.
	echoOnce(t, cli, srv, "after the flood")
}

//go:build linux

package kquic_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// TestModuleBugLateMaxStreamData: a MAX_STREAM_DATA frame for a stream
// the peer opened, arriving after the kernel released it (its data read to
// the FIN, its answer and FIN acknowledged), closes the connection with
// STREAM_STATE_ERROR. RFC 9000 §3.5 and §19.10 ask for it to be ignored
// (a frame for a closed stream); quic_stream_get (stream.c) refuses a
// send-side lookup of a stream the peer initiated before it checks whether
// the stream was closed. kqbench interop's transfer case saw quic-go's
// client, whose window updates race its streams' ends, lose the connection
// so.
//
// A raw client sends a request with its FIN on stream 0; the kernel server
// reads it and answers with a FIN; the client takes the answer and
// acknowledges it; once the server's kernel reports every byte of the
// answer acknowledged (SEND_STATE_RECVD), the client sends MAX_STREAM_DATA
// for stream 0.
func TestModuleBugLateMaxStreamData(t *testing.T) {
	ctls, stls := tlsPair(t)
	ln := hsListen(t, &kquic.Config{TLS: stls, Events: []kquic.EventType{kquic.EventStreamUpdate}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	served := make(chan error, 1)
	released := make(chan string, 1)
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		s, err := c.AcceptStream(ctx)
		if err == nil {
			_, err = io.ReadAll(s)
		}
		if err == nil {
			_, err = s.WriteAndClose([]byte("answer"))
		}
		served <- err
		for {
			e, err := c.ReceiveEvent(ctx)
			if err != nil {
				released <- fmt.Sprintf("no SEND_STATE_RECVD event for stream 0: %v", err)
				return
			}
			if u, ok := e.(*kquic.StreamUpdateEvent); ok && u.StreamID == 0 && u.State == quicabi.QUIC_STREAM_SEND_STATE_RECVD {
				released <- ""
				<-ctx.Done() // keep the connection until the test ends
				return
			}
		}
	}()
	c, err := quicpeer.Dial(ctx, ln.AddrPort().String(), quicpeer.Config{TLS: ctls})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	if err := c.Send(quicwire.OneRTT, quicwire.Stream{StreamID: 0, Data: []byte("request"), Fin: true}); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("the server: %v", err)
	}
	if _, err := c.Poll(10*time.Second, func(quicpeer.Packet) bool { _, fin := c.StreamData(0); return fin }); err != nil {
		t.Fatal(err)
	}
	if data, fin := c.StreamData(0); !fin || string(data) != "answer" {
		t.Fatalf("the server's answer on stream 0: %q (FIN %v)", data, fin)
	}
	// Acknowledge until the server's kernel says the answer arrived.
	var why string
	for done := false; !done; {
		if _, err := c.Poll(50*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case why = <-released:
			done = true
		case <-ctx.Done():
			t.Fatal("the server never saw its answer acknowledged")
		default:
		}
	}
	if why != "" {
		t.Fatal(why)
	}
	if err := c.Send(quicwire.OneRTT, quicwire.MaxStreamData{StreamID: 0, Max: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	cc, err := c.WaitClose(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	evidence := "no CONNECTION_CLOSE within 2 s of the MAX_STREAM_DATA"
	if cc != nil {
		evidence = fmt.Sprintf("CONNECTION_CLOSE %v (frame type %#x) %q after MAX_STREAM_DATA for the released stream 0", quicwire.TransportError(cc.ErrorCode), cc.Offending, cc.Reason)
	}
	t.Log(evidence)
	bug := cc != nil && !cc.App && quicwire.TransportError(cc.ErrorCode) == quicwire.StreamStateError && cc.Offending == 0x11
	testenv.ModuleBug(t, bugLateMaxStreamData, bug, evidence)
	if cc != nil {
		t.Fatalf("the server closed the connection: %s", evidence)
	}
}

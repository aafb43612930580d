//go:build linux

package kquic_test

// The notification part of func_test.c's checklist: every event type,
// decoded, through Config.Events, Conn.SetEventEnabled and ReceiveEvent.
// (Migration, key update and NEW_TOKEN events are checked in
// functest_conn_test.go, the close event in functest_close_test.go.)

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"kquic.dev/kquic"
)

var allEvents = []kquic.EventType{
	kquic.EventStreamUpdate, kquic.EventStreamMaxData, kquic.EventMaxStreams,
	kquic.EventConnectionID, kquic.EventConnectionClose, kquic.EventMigration,
	kquic.EventKeyUpdate, kquic.EventNewToken, kquic.EventNewSessionTicket,
}

// streamEvents collects the StreamUpdateEvents of one stream until it has n.
func streamEvents(t *testing.T, c *kquic.Conn, id int64, n int) []kquic.StreamState {
	t.Helper()
	var got []kquic.StreamState
	for len(got) < n {
		e := nextEvent(t, c, "stream update", func(e kquic.Event) bool {
			su, ok := e.(*kquic.StreamUpdateEvent)
			return ok && su.StreamID == id
		}).(*kquic.StreamUpdateEvent)
		got = append(got, e.State)
		if e.State == kquic.StreamState(10) /* RECV_STATE_RESET_RECVD */ || e.State == 5 /* SEND_STATE_RESET_RECVD */ || e.State == 4 /* RESET_SENT */ {
			if e.ErrorCode != 1 {
				t.Errorf("stream %d %v: error code %d, want 1", id, e.State, e.ErrorCode)
			}
		}
		if e.State == 8 /* RECV_STATE_RECVD */ && e.FinalSize != uint64(len("quic event test2")) {
			t.Errorf("stream %d RECVD: final size %d, want %d", id, e.FinalSize, len("quic event test2"))
		}
	}
	return got
}

func states(s ...int) []kquic.StreamState {
	var r []kquic.StreamState
	for _, v := range s {
		r = append(r, kquic.StreamState(v))
	}
	return r
}

// TestFuncEventsStreamUpdate: the STREAM_UPDATE events of a whole exchange,
// of our reset, of the peer's STOP_SENDING and of the peer's reset.
func TestFuncEventsStreamUpdate(t *testing.T) {
	cli, _ := funcPair(t, &kquic.Config{Events: []kquic.EventType{kquic.EventStreamUpdate}}, nil)
	const (
		sendRecvd      = 3
		sendResetSent  = 4
		sendResetRecvd = 5
		recvRecv       = 6
		recvRecvd      = 8
		recvResetRecvd = 10
	)
	s, _ := cli.OpenStream()
	if got := echoOn(t, s, "quic event test2"); got != "quic event test2" {
		t.Fatalf("echo %q", got)
	}
	if got := streamEvents(t, cli, s.StreamID(), 3); !equalStates(got, states(sendRecvd, recvRecv, recvRecvd)) && !equalStates(got, states(recvRecv, sendRecvd, recvRecvd)) {
		t.Errorf("stream %d events %v; want SEND RECVD, RECV RECV, RECV RECVD", s.StreamID(), got)
	}

	s, _ = cli.OpenStream()
	s.Write([]byte("client reset"))
	if err := s.CancelWrite(1); err != nil {
		t.Fatal(err)
	}
	if got := streamEvents(t, cli, s.StreamID(), 1); !equalStates(got, states(sendResetRecvd)) {
		t.Errorf("after our reset: %v, want SEND RESET_RECVD", got)
	}
	s.CancelRead(0)

	s, _ = cli.OpenStream()
	s.Write([]byte("client stop_sending"))
	if got := streamEvents(t, cli, s.StreamID(), 2); !equalStates(got, states(sendResetSent, sendResetRecvd)) {
		t.Errorf("after the peer's STOP_SENDING: %v, want SEND RESET_SENT, SEND RESET_RECVD", got)
	}
	s.CancelRead(0)

	u, _ := cli.OpenUniStream()
	u.Write([]byte("client reset"))
	u.Close()
	r, err := cli.AcceptUniStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := streamEvents(t, cli, r.StreamID(), 2); !equalStates(got, states(recvRecv, recvResetRecvd)) {
		t.Errorf("peer reset of stream %d: %v, want RECV RECV, RECV RESET_RECVD", r.StreamID(), got)
	}

	// Turned off, no more stream updates.
	if err := cli.SetEventEnabled(kquic.EventStreamUpdate, false); err != nil {
		t.Fatal(err)
	}
	echo(t, cli, "quiet")
	noEvent(t, cli, 300*time.Millisecond, "stream update after turning it off", func(e kquic.Event) bool { return e.Type() == kquic.EventStreamUpdate })
	// The connection still tracks streams itself.
	if got := echo(t, cli, "still works"); got != "still works" {
		t.Errorf("echo %q", got)
	}
}

func equalStates(a, b []kquic.StreamState) bool { return bytes.Equal(stateBytes(a), stateBytes(b)) }

func stateBytes(s []kquic.StreamState) []byte {
	var b []byte
	for _, v := range s {
		b = append(b, byte(v))
	}
	return b
}

// TestFuncEventsLimits: MAX_STREAMS (bidi and uni) and MAX_STREAM_DATA.
func TestFuncEventsLimits(t *testing.T) {
	ccfg := &kquic.Config{Events: []kquic.EventType{kquic.EventMaxStreams, kquic.EventStreamMaxData}}
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamsBidi: 8, MaxStreamsUni: 8, MaxStreamDataBidiRemote: 4096}}
	cli, _ := funcPair(t, ccfg, scfg)
	// 16 times the stream's credit, written 1 KiB at a time. (One write
	// that fills the window in a single packet stalls: the module's
	// MAX_STREAM_DATA carries the limit from before the update it makes.)
	s, _ := cli.OpenStream()
	s.SetDeadline(time.Now().Add(20 * time.Second))
	for range 64 {
		if _, err := s.Write(bytes.Repeat([]byte("m"), 1024)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if got, err := io.ReadAll(s); err != nil || len(got) != 64<<10 {
		t.Fatalf("echo of 64 KiB came back with %d bytes, %v", len(got), err)
	}
	md := nextEvent(t, cli, "StreamMaxDataEvent", func(e kquic.Event) bool { return e.Type() == kquic.EventStreamMaxData }).(*kquic.StreamMaxDataEvent)
	if md.StreamID != 0 || md.MaxData <= 4096 {
		t.Errorf("StreamMaxDataEvent %+v: want stream 0 and more than 4096", md)
	}
	e := nextEvent(t, cli, "bidi MaxStreamsEvent", func(e kquic.Event) bool {
		m, ok := e.(*kquic.MaxStreamsEvent)
		return ok && !m.Uni()
	}).(*kquic.MaxStreamsEvent)
	// One of 8 streams freed: stream IDs up to 4*8 = 32 allowed (9 streams).
	if e.MaxStreamID != 32 || e.Count() != 9 {
		t.Errorf("bidi MaxStreamsEvent: max stream ID %d (count %d), want 32 (9)", e.MaxStreamID, e.Count())
	}

	u, _ := cli.OpenUniStream()
	u.Write([]byte("uni"))
	u.Close()
	r, err := cli.AcceptUniStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(r)
	e = nextEvent(t, cli, "uni MaxStreamsEvent", func(e kquic.Event) bool {
		m, ok := e.(*kquic.MaxStreamsEvent)
		return ok && m.Uni()
	}).(*kquic.MaxStreamsEvent)
	if e.MaxStreamID != 34 || e.Count() != 9 {
		t.Errorf("uni MaxStreamsEvent: max stream ID %d (count %d), want 34 (9)", e.MaxStreamID, e.Count())
	}
}

// TestFuncEventsConnectionID: retiring IDs reports CONNECTION_ID events
// for our source IDs (Dest false) and the peer's (Dest true).
func TestFuncEventsConnectionID(t *testing.T) {
	cli, _ := funcPair(t, &kquic.Config{Events: []kquic.EventType{kquic.EventConnectionID}}, nil)
	for _, dest := range []bool{false, true} {
		_, prior, err := cli.ConnectionIDs(dest)
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.RetireConnectionIDs(dest, 0, prior+1); err != nil {
			t.Fatal(err)
		}
		e := nextEvent(t, cli, "ConnectionIDEvent", func(e kquic.Event) bool { return e.Type() == kquic.EventConnectionID }).(*kquic.ConnectionIDEvent)
		if e.Dest != dest || e.PriorTo != prior+1 {
			t.Errorf("ConnectionIDEvent %+v; want Dest %v, PriorTo %d", e, dest, prior+1)
		}
	}
}

// TestFuncEventsAll: a connection asking for every event type decodes each
// into its Go type, and a client gets the session ticket event.
func TestFuncEventsAll(t *testing.T) {
	cli, srv := funcPair(t, &kquic.Config{Events: allEvents}, &kquic.Config{Events: allEvents})
	nst := nextEvent(t, cli, "NewSessionTicketEvent", func(e kquic.Event) bool { return e.Type() == kquic.EventNewSessionTicket }).(*kquic.NewSessionTicketEvent)
	if len(nst.Ticket) < 4 || nst.Ticket[0] != 4 {
		t.Errorf("NewSessionTicketEvent: %x..., want a TLS NewSessionTicket message (type 4)", nst.Ticket[:min(len(nst.Ticket), 8)])
	}
	echo(t, cli, "hello")
	srv.UpdateKeys()
	echo(t, cli, "client new_token")
	echo(t, cli, "after")
	seen := map[kquic.EventType]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		e, err := cli.ReceiveEvent(ctx)
		if err != nil {
			break
		}
		if e == nil {
			t.Fatal("nil event")
		}
		seen[e.Type()] = true
	}
	for _, want := range []kquic.EventType{kquic.EventStreamUpdate, kquic.EventMaxStreams, kquic.EventKeyUpdate, kquic.EventNewToken} {
		if !seen[want] {
			t.Errorf("no %v event (saw %v)", want, seen)
		}
	}
	if err := cli.SetEventEnabled(kquic.EventType(0), true); err == nil {
		t.Error("SetEventEnabled(0) succeeded")
	}
}

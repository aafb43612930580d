//go:build linux

package kquic_test

// The stream part of the kernel module's functional checklist (func_test.c),
// through the Go API. See also functest_conn_test.go, functest_events_test.go
// and functest_close_test.go.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// funcServer makes srv behave like func_test's server: it echoes every
// stream (a bidirectional stream on itself, a unidirectional one on a new
// unidirectional stream of its own) and every datagram, and reacts to the
// magic messages.
func funcServer(t testing.TB, srv *kquic.Conn) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			s, err := srv.AcceptStream(ctx)
			if err != nil {
				return
			}
			go serveStream(srv, s, s)
		}
	}()
	go func() {
		for {
			s, err := srv.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			go serveStream(srv, s, nil)
		}
	}()
	go func() {
		for {
			d, err := srv.ReceiveDatagram(ctx)
			if err != nil {
				return
			}
			srv.SendDatagram(d)
		}
	}()
}

// readEnd and writeEnd are what serveStream needs of the stream it reads
// and of the one it answers on: a *kquic.Stream is both, a
// *kquic.ReceiveStream the first, a *kquic.SendStream the second.
type (
	readEnd interface {
		StreamID() int64
		Read(p []byte) (int, error)
		CancelRead(code kquic.StreamErrorCode) error
	}
	writeEnd interface {
		Write(p []byte) (int, error)
		Close() error
		CancelWrite(code kquic.StreamErrorCode) error
	}
)

// sendEnd is a stream this side opened: a *kquic.Stream or a
// *kquic.SendStream.
type sendEnd interface {
	StreamID() int64
	io.WriteCloser
}

// serveStream answers what it reads on s on reply, or on a new
// unidirectional stream when reply is nil.
func serveStream(srv *kquic.Conn, s readEnd, reply writeEnd) {
	var msg []byte
	buf := make([]byte, 4096)
	for {
		n, err := s.Read(buf)
		msg = append(msg, buf[:n]...)
		if bytes.HasPrefix(msg, []byte("client stop_sending")) {
			s.CancelRead(1)
			return
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return
		}
	}
	if reply == nil { // a client unidirectional stream
		u, err := srv.OpenUniStreamSync(context.Background())
		if err != nil {
			return
		}
		reply = u
	}
	switch string(msg) {
	case "client reset":
		reply.Write(msg)
		reply.CancelWrite(1)
		return
	case "client migration":
		local := srv.LocalAddr().(interface{ AddrPort() netip.AddrPort }).AddrPort()
		srv.Migrate(netip.AddrPortFrom(local.Addr(), local.Port()+1))
	case "client key_update":
		// The client's own update may still be completing: retry briefly.
		for i := 0; i < 50 && srv.UpdateKeys() != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	case "client new_token":
		srv.SendNewToken()
	case "client close":
		reply.Write(msg)
		reply.Close()
		time.Sleep(100 * time.Millisecond)
		srv.CloseWithError(10, "this is app err")
		return
	}
	reply.Write(msg)
	reply.Close()
}

// funcPair is pair() with funcServer running on the server.
func funcPair(t testing.TB, ccfg, scfg *kquic.Config) (client, server *kquic.Conn) {
	t.Helper()
	client, server = pair(t, ccfg, scfg)
	funcServer(t, server)
	return client, server
}

// echo sends msg on a new bidirectional stream and returns the reply.
func echo(t testing.TB, c *kquic.Conn, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatalf("open stream for %q: %v", msg, err)
	}
	return echoOn(t, s, msg)
}

func echoOn(t testing.TB, s *kquic.Stream, msg string) string {
	t.Helper()
	s.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := s.Write([]byte(msg)); err != nil {
		t.Fatalf("stream %d: write %q: %v", s.StreamID(), short(msg), err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("stream %d: close: %v", s.StreamID(), err)
	}
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("stream %d: read the echo of %q: %v", s.StreamID(), short(msg), err)
	}
	return string(got)
}

func short(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%s... (%d bytes)", s[:40], len(s))
	}
	return s
}

// TestFuncStreamIDs: stream IDs are handed out in order per type, each
// stream carries its own data, and the echo comes back on the right stream.
func TestFuncStreamIDs(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	var streams []sendEnd
	open := func(uni bool, want int64) {
		t.Helper()
		var s sendEnd
		var err error
		if uni {
			s, err = cli.OpenUniStream()
		} else {
			s, err = cli.OpenStream()
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.StreamID() != want {
			t.Fatalf("opened stream %d, want %d", s.StreamID(), want)
		}
		streams = append(streams, s)
	}
	open(false, 0)
	open(true, 2)
	open(false, 4)
	open(false, 8)
	open(true, 6)
	open(true, 10)

	// Write and finish them out of order, interleaved.
	for _, i := range []int{3, 1, 0, 5, 2, 4} {
		s := streams[i]
		if _, err := fmt.Fprintf(s, "quic stream %d", s.StreamID()); err != nil {
			t.Fatalf("write on %d: %v", s.StreamID(), err)
		}
	}
	for _, i := range []int{5, 4, 3, 2, 1, 0} {
		if err := streams[i].Close(); err != nil {
			t.Fatalf("close %d: %v", streams[i].StreamID(), err)
		}
	}
	// Writing on a finished stream fails; a second Close is harmless.
	if _, err := streams[0].Write([]byte("late")); err == nil {
		t.Error("write after Close succeeded")
	}
	if err := streams[0].Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// (Our unidirectional streams cannot be read, nor the peer's written:
	// they have no such methods, TestUniStreamTypes.)
	for _, s := range streams {
		s, ok := s.(*kquic.Stream)
		if !ok {
			continue
		}
		s.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(s)
		if want := fmt.Sprintf("quic stream %d", s.StreamID()); err != nil || string(got) != want {
			t.Errorf("stream %d echo = %q, %v; want %q", s.StreamID(), got, err, want)
		}
	}
	// The unidirectional replies arrive on server-initiated uni streams.
	var got []string
	for range 3 {
		s, err := cli.AcceptUniStream(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if s.StreamID()&3 != 3 {
			t.Errorf("reply on stream %d: not a server unidirectional stream", s.StreamID())
		}
		s.SetReadDeadline(time.Now().Add(20 * time.Second))
		b, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	slices.Sort(got)
	if want := []string{"quic stream 10", "quic stream 2", "quic stream 6"}; !slices.Equal(got, want) {
		t.Errorf("uni replies %q, want %q", got, want)
	}
}

// TestFuncStreamLimit: opening beyond the peer's MAX_STREAMS gives
// ErrStreamLimit (OpenStream) or waits (OpenStreamSync) until the peer
// allows more.
func TestFuncStreamLimit(t *testing.T) {
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamsBidi: 4, MaxStreamsUni: 2}}
	cli, _ := funcPair(t, nil, scfg)
	p, err := cli.PeerTransportParameters()
	if err != nil || p.MaxStreamsBidi != 4 || p.MaxStreamsUni != 2 {
		t.Fatalf("peer limits %d/%d, %v; want 4/2", p.MaxStreamsBidi, p.MaxStreamsUni, err)
	}
	for _, uni := range []bool{false, true} {
		open := func() (sendEnd, error) { return cli.OpenStream() }
		openSync := func(ctx context.Context) (sendEnd, error) { return cli.OpenStreamSync(ctx) }
		n, next := 4, int64(16)
		if uni {
			open = func() (sendEnd, error) { return cli.OpenUniStream() }
			openSync = func(ctx context.Context) (sendEnd, error) { return cli.OpenUniStreamSync(ctx) }
			n, next = 2, 10
		}
		var ss []sendEnd
		for range n {
			s, err := open()
			if err != nil {
				t.Fatalf("uni %v: open within the limit: %v", uni, err)
			}
			ss = append(ss, s)
		}
		if _, err := open(); !errors.Is(err, kquic.ErrStreamLimit) {
			t.Fatalf("uni %v: open over the limit = %v, want ErrStreamLimit", uni, err)
		}
		type res struct {
			s   sendEnd
			err error
		}
		done := make(chan res, 1)
		go func() {
			s, err := openSync(ctxT(t))
			done <- res{s, err}
		}()
		select {
		case r := <-done:
			t.Fatalf("uni %v: OpenStreamSync over the limit returned at once: %v", uni, r.err)
		case <-time.After(300 * time.Millisecond):
		}
		// Finish one stream: the peer frees it and raises the limit.
		if uni {
			ss[0].Write([]byte("free me"))
			ss[0].Close()
			r, err := cli.AcceptUniStream(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(r)
		} else if got := echoOn(t, ss[0].(*kquic.Stream), "free me"); got != "free me" {
			t.Fatalf("echo %q", got)
		}
		select {
		case r := <-done:
			if r.err != nil || r.s.StreamID() != next {
				t.Fatalf("uni %v: OpenStreamSync after MAX_STREAMS = %v, %v; want stream %d", uni, r.s, r.err, next)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("uni %v: OpenStreamSync still blocked after a stream was freed", uni)
		}
		if _, err := open(); !errors.Is(err, kquic.ErrStreamLimit) {
			t.Fatalf("uni %v: open over the new limit = %v, want ErrStreamLimit", uni, err)
		}
	}
}

// TestFuncStreamReset: resets and STOP_SENDING in both directions surface as
// *StreamError with the code, and the stream's later operations fail.
func TestFuncStreamReset(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	var serr *kquic.StreamError

	// Our reset: later writes fail with our own StreamError.
	s, _ := cli.OpenStream()
	s.Write([]byte("to be reset"))
	if err := s.CancelWrite(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("x")); !errors.As(err, &serr) || serr.Remote || serr.ErrorCode != 1 {
		t.Errorf("write after CancelWrite = %v, want local StreamError code 1", err)
	}
	if err := s.CancelWrite(1); err != nil {
		t.Errorf("second CancelWrite = %v, want nil", err)
	}
	s.CancelRead(0)

	// CancelWrite on a finished stream is a no-op.
	s, _ = cli.OpenStream()
	if got := echoOn(t, s, "finished"); got != "finished" {
		t.Fatalf("echo %q", got)
	}
	if err := s.CancelWrite(3); err != nil {
		t.Errorf("CancelWrite on a finished stream = %v, want nil", err)
	}

	// The peer resets its reply: bidirectional (same stream) and
	// unidirectional (its own stream).
	s, _ = cli.OpenStream()
	s.Write([]byte("client reset"))
	s.Close()
	s.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(s); !errors.As(err, &serr) || !serr.Remote || serr.ErrorCode != 1 || serr.StreamID != s.StreamID() {
		t.Errorf("read of a reset reply = %v, want remote StreamError code 1 on stream %d", err, s.StreamID())
	}
	u, _ := cli.OpenUniStream()
	u.Write([]byte("client reset"))
	u.Close()
	r, err := cli.AcceptUniStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(r); !errors.As(err, &serr) || !serr.Remote || serr.ErrorCode != 1 {
		t.Errorf("read of a reset uni reply = %v, want remote StreamError code 1", err)
	}

	// The peer's STOP_SENDING: writes fail with its code, and so does
	// Close; CancelWrite has nothing left to do.
	s, _ = cli.OpenStream()
	s.Write([]byte("client stop_sending"))
	s.SetWriteDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i < 2000; i++ {
		if _, err = s.Write(bytes.Repeat([]byte("y"), 1000)); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !errors.As(err, &serr) || !serr.Remote || serr.ErrorCode != 1 {
		t.Fatalf("write after STOP_SENDING = %v, want remote StreamError code 1", err)
	}
	if _, err := s.Write([]byte("z")); !errors.As(err, &serr) || !serr.Remote {
		t.Errorf("second write after STOP_SENDING = %v, want remote StreamError", err)
	}
	if err := s.Close(); !errors.As(err, &serr) || !serr.Remote {
		t.Errorf("Close (FIN) after STOP_SENDING = %v, want remote StreamError", err)
	}
	if err := s.CancelWrite(2); err != nil {
		t.Errorf("CancelWrite after STOP_SENDING = %v, want nil", err)
	}

	// Our own CancelRead: Read fails at once with our code. (An echo on
	// another stream first, so that the server has seen this stream when
	// the STOP_SENDING comes: see TestFuncStopSendingBeforeData.)
	s, _ = cli.OpenStream()
	s.Write([]byte("read me not"))
	if got := echo(t, cli, "sync"); got != "sync" {
		t.Fatalf("echo %q", got)
	}
	if err := s.CancelRead(5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(make([]byte, 10)); !errors.As(err, &serr) || serr.Remote || serr.ErrorCode != 5 {
		t.Errorf("read after CancelRead = %v, want local StreamError code 5", err)
	}

	// The connection still works.
	if got := echo(t, cli, "still alive"); got != "still alive" {
		t.Errorf("echo %q", got)
	}
}

// TestFuncStopSendingBeforeData: a client may send STOP_SENDING on a stream it
// opened before any of the stream's data reached the server; the server must
// then open the stream (RFC 9000 §3.2, §19.5: only a STOP_SENDING for a
// locally-initiated stream not yet created is an error). The module at
// 03a9c7cdb2d5 closes the connection with STREAM_STATE_ERROR instead: that
// is reported as a known module bug, with the evidence, not a pass.
func TestFuncStopSendingBeforeData(t *testing.T) {
	cli, _ := funcPair(t, nil, nil)
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	// Nothing written: STOP_SENDING is the first frame of the stream.
	if err := s.CancelRead(7); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s2, err := cli.OpenStreamSync(ctx)
	if err == nil {
		_, err = s2.Write([]byte("after"))
		if err == nil {
			err = s2.Close()
		}
		if err == nil {
			var got []byte
			s2.SetReadDeadline(time.Now().Add(20 * time.Second))
			got, err = io.ReadAll(s2)
			if err == nil && string(got) != "after" {
				t.Fatalf("echo after the early STOP_SENDING = %q, want \"after\"", got)
			}
		}
	}
	var cerr *kquic.CloseError
	bug := errors.As(err, &cerr) && cerr.Remote && cerr.TransportErrorCode == kquic.StreamStateError && cerr.FrameType == 0x5
	testenv.ModuleBug(t, bugStopSendingBeforeData, bug, fmt.Sprint(err))
	if err != nil {
		t.Fatalf("the connection after an early STOP_SENDING: %v", err)
	}
}

// TestFuncStreamWriteAndClose checks that WriteAndClose delivers the data
// and the FIN (the echo server answers after its io.EOF), for data within
// one packet and data of many, and that the stream takes no more writes.
func TestFuncStreamWriteAndClose(t *testing.T) {
	cli, _ := funcPair(t, &kquic.Config{StreamDataNoDelay: true}, &kquic.Config{StreamDataNoDelay: true})
	for _, size := range []int{64, 64 << 10} {
		s, err := cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("w"), size)
		if n, err := s.WriteAndClose(want); n != size || err != nil {
			t.Fatalf("WriteAndClose of %d bytes = %d, %v", size, n, err)
		}
		s.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(s)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("echo of %d bytes sent by WriteAndClose: %d bytes, %v (the FIN did not arrive, or the data differs)", size, len(got), err)
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Errorf("Write after WriteAndClose succeeded, want an error")
		}
		if _, err := s.WriteAndClose([]byte("x")); err == nil {
			t.Errorf("WriteAndClose after WriteAndClose succeeded, want an error")
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close after WriteAndClose: %v, want nil", err)
		}
	}
}

//go:build linux

package kquic

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/internal/parked"
	"kquic.dev/internal/quicabi"
)

// These tests run the connection's concurrency core - who receives, how
// data reaches each stream's Read, stream state, deadlines, the end of the
// connection - over a scripted kernel (fakekernel_test.go): no module, so
// they run everywhere, with -race in CI.

// streamRead is Stream.Read as runtime.Stack names it, for parked.Wait.
const streamRead = "kquic.dev/kquic.(*Stream).Read"

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestCoreReadHandoff: the peer's data for two streams, interleaved, reaches
// each stream's Read in order whoever receives it - a Read for its own
// stream, a Read for the other, or the connection's goroutine - with
// concurrent Reads on both.
func TestCoreReadHandoff(t *testing.T) {
	c, k := newFakeConn(t, true)
	const n = 500
	var want [2]strings.Builder
	go func() {
		for i := 0; i < n; i++ {
			for s, id := range []int64{1, 5} { // server-initiated bidi streams
				msg := strings.Repeat(string(rune('a'+i%26)), 1+i%7)
				want[s].WriteString(msg)
				k.deliver(id, msg, i == n-1)
				if i%50 == 0 {
					time.Sleep(time.Millisecond) // let receivers trade places
				}
			}
		}
	}()
	var wg sync.WaitGroup
	got := make([]string, 2)
	errs := make([]error, 2)
	for s := 0; s < 2; s++ {
		st, err := c.AcceptStream(ctx10(t))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(st *Stream) {
			defer wg.Done()
			idx := int(st.StreamID()-1) / 4
			st.SetReadDeadline(time.Now().Add(10 * time.Second))
			buf := make([]byte, 3+idx*2000) // one small, one direct
			var b strings.Builder
			for {
				m, err := st.Read(buf)
				b.Write(buf[:m])
				if err != nil {
					if err != io.EOF {
						errs[idx] = err
					}
					break
				}
			}
			got[idx] = b.String()
		}(st)
	}
	wg.Wait()
	for s := 0; s < 2; s++ {
		if errs[s] != nil {
			t.Errorf("stream %d: %v", s, errs[s])
		}
		if got[s] != want[s].String() {
			t.Errorf("stream %d: read %d bytes, want %d (in order)", s, len(got[s]), len(want[s].String()))
		}
	}
}

// TestCoreReadDeadline: a Read past its deadline fails with
// os.ErrDeadlineExceeded, and the deadline of one stream does not end a
// Read waiting on another, which gets its data afterwards.
func TestCoreReadDeadline(t *testing.T) {
	c, k := newFakeConn(t, true)
	k.deliver(1, "a", false)
	k.deliver(5, "b", false)
	a, _ := c.AcceptStream(ctx10(t))
	b, _ := c.AcceptStream(ctx10(t))
	buf := make([]byte, 10)
	a.Read(buf)
	b.Read(buf)
	done := make(chan error, 1)
	go func() {
		b.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := b.Read(make([]byte, 10))
		if err == nil && n == 0 {
			err = errors.New("empty read")
		}
		done <- err
	}()
	a.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	start := time.Now()
	if _, err := a.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("deadline of 100ms ended the Read after %v", d)
	}
	select {
	case err := <-done:
		t.Fatalf("the other stream's Read ended with the first's deadline: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	k.deliver(5, "later", false)
	if err := <-done; err != nil {
		t.Errorf("the other stream's Read = %v, want its data", err)
	}
	// A deadline set while a Read waits ends it too: set once the Read is
	// seen waiting.
	a.SetReadDeadline(time.Time{})
	waiting := make(chan error, 1)
	go func() { _, err := a.Read(buf); waiting <- err }()
	parked.Wait(t, streamRead)
	a.SetReadDeadline(time.Now())
	select {
	case err := <-waiting:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read whose deadline was set while it waited = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a deadline set while a Read waited did not end it")
	}
}

// TestCoreStreamState: the peer's reset reaches Read as a *StreamError,
// CancelRead asks the kernel for STOP_SENDING and ends our Read, and FIN
// gives io.EOF after the data.
func TestCoreStreamState(t *testing.T) {
	c, k := newFakeConn(t, true)
	k.deliver(1, "data", false)
	s, _ := c.AcceptStream(ctx10(t))
	k.event(quicabi.QUIC_EVENT_STREAM_UPDATE, quicabi.StreamUpdate{ID: 1, State: quicabi.QUIC_STREAM_RECV_STATE_RESET_RECVD, ErrCode: 42}.Marshal())
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	var se *StreamError
	buf := make([]byte, 10)
	var err error
	for err == nil {
		_, err = s.Read(buf)
	}
	if !errors.As(err, &se) || se.ErrorCode != 42 || !se.Remote {
		t.Errorf("Read after the peer's reset = %v, want a remote *StreamError with code 42", err)
	}

	k.deliver(5, "x", false)
	s2, _ := c.AcceptStream(ctx10(t))
	s2.Read(buf)
	readErr := make(chan error, 1)
	go func() { _, err := s2.Read(buf); readErr <- err }()
	parked.Wait(t, streamRead)
	if err := s2.CancelRead(7); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; !errors.As(err, &se) || se.Remote || se.ErrorCode != 7 {
		t.Errorf("Read ended by CancelRead = %v", err)
	}
	k.mu.Lock()
	code, ok := k.stops[5]
	k.mu.Unlock()
	if !ok || code != 7 {
		t.Errorf("STOP_SENDING asked of the kernel: %v %d", ok, code)
	}

	k.deliver(9, "end", true)
	s3, _ := c.AcceptStream(ctx10(t))
	s3.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(s3)
	if string(b) != "end" || err != nil {
		t.Errorf("ReadAll of a stream with FIN = %q, %v", b, err)
	}
}

// TestCoreWritesAndDeadlines: writes reach the kernel on their stream with
// FIN on Close; with the socket's buffer full, a write with a deadline ends
// at it while a write without one on another stream waits on, and goes on
// once there is room.
func TestCoreWritesAndDeadlines(t *testing.T) {
	c, k := newFakeConn(t, true)
	a, _ := c.OpenStream()
	b, _ := c.OpenStream()
	if _, err := a.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got, fin := k.sentOn(a.StreamID()); got != "hello" || !fin {
		t.Errorf("stream %d got %q (FIN %v)", a.StreamID(), got, fin)
	}
	k.setFull(true)
	bDone := make(chan error, 1)
	go func() { _, err := b.Write([]byte("waits")); bDone <- err }()
	cst, _ := c.OpenStream()
	cst.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := cst.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past its deadline = %v", err)
	}
	select {
	case err := <-bDone:
		t.Fatalf("a write without deadline ended with another's: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	k.setFull(false)
	if err := <-bDone; err != nil {
		t.Fatalf("write after room came: %v", err)
	}
	if got, _ := k.sentOn(b.StreamID()); got != "waits" {
		t.Errorf("stream %d got %q", b.StreamID(), got)
	}
}

// TestCoreAcceptAfterEnd: a connection that has ended hands out no stream,
// not even one the peer opened before the end and nobody accepted: Accept
// fails with the close, as quic-go's does.
func TestCoreAcceptAfterEnd(t *testing.T) {
	c, k := newFakeConn(t, true)
	k.deliver(1, "x", false) // a stream the peer opened
	// Wait until the connection's receiver queued it.
	for {
		c.mu.Lock()
		n, ch := len(c.acceptQ[0].items), c.acceptQ[0].sig.wait()
		c.mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("the peer's stream was not queued for Accept")
		}
	}
	k.peerClose(quicabi.ConnectionClose{ErrCode: 0x100, Phrase: "bye"})
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the peer's close did not end the connection")
	}
	s, err := c.AcceptStream(ctx10(t))
	var ce *CloseError
	if s != nil || !errors.As(err, &ce) || ce.ErrorCode != 0x100 || !errors.Is(err, net.ErrClosed) {
		t.Errorf("AcceptStream after the end: %v, %v; want the peer's close", s, err)
	}
}

// TestCoreEnd: the peer's close ends every waiter - Read, AcceptStream, a
// write waiting for room - with the same *CloseError, which matches
// net.ErrClosed; our Close leaves no goroutine behind.
func TestCoreEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	c, k := newFakeConn(t, true)
	k.deliver(1, "x", false)
	s, _ := c.AcceptStream(ctx10(t))
	s.Read(make([]byte, 1))
	w, _ := c.OpenStream()
	k.setFull(true)
	errs := make(chan error, 3)
	go func() { _, err := s.Read(make([]byte, 1)); errs <- err }()
	go func() { _, err := c.AcceptStream(context.Background()); errs <- err }()
	go func() { _, err := w.Write([]byte("y")); errs <- err }()
	parked.Wait(t, streamRead, "kquic.dev/kquic.(*Conn).AcceptStream", "kquic.dev/kquic.(*Stream).Write")
	k.peerClose(quicabi.ConnectionClose{ErrCode: 0x100, Phrase: "bye"})
	for i := 0; i < 3; i++ {
		select {
		case err := <-errs:
			var ce *CloseError
			if !errors.As(err, &ce) || !ce.Remote || !ce.Application || ce.ErrorCode != 0x100 || ce.Reason != "bye" || !errors.Is(err, net.ErrClosed) {
				t.Errorf("waiter %d ended with %v, want the peer's application close 0x100", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter did not end with the peer's close")
		}
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

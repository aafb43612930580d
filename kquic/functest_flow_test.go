//go:build linux

package kquic_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// TestFuncFlowControlCredit: a writer held back by the stream's flow
// control turns the kernel's MAX_STREAM_DATA event on while it waits, goes
// on as the reader grants credit, and turns the event off again (it would
// otherwise wake the connection's receiver for every MAX_STREAM_DATA). An
// application that asked for the event keeps it.
func TestFuncFlowControlCredit(t *testing.T) {
	for _, asked := range []bool{false, true} {
		name := map[bool]string{false: "internal", true: "asked"}[asked]
		t.Run(name, func(t *testing.T) {
			ccfg := &kquic.Config{}
			if asked {
				ccfg.Events = []kquic.EventType{kquic.EventStreamMaxData}
			}
			scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamDataBidiRemote: 4096}}
			cli, srv := pair(t, ccfg, scfg)
			on := func() bool {
				t.Helper()
				v, err := kquic.KernelEventOn(cli, kquic.EventStreamMaxData)
				if err != nil {
					t.Fatalf("query the MAX_STREAM_DATA event: %v", err)
				}
				return v
			}
			if got := on(); got != asked {
				t.Fatalf("MAX_STREAM_DATA event on before any write: %v, want %v", got, asked)
			}
			const total = 64 << 10
			data := bytes.Repeat([]byte("0123456789abcdef"), total/16)
			s, err := cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			s.SetWriteDeadline(time.Now().Add(30 * time.Second))
			wrote := make(chan error, 1)
			go func() {
				for off := 0; off < total; off += 1024 {
					if _, err := s.Write(data[off : off+1024]); err != nil {
						wrote <- err
						return
					}
				}
				wrote <- s.Close()
			}()
			// The writer stops at the 4 KiB of credit with the event on.
			deadline := time.Now().Add(10 * time.Second)
			for !on() {
				if time.Now().After(deadline) {
					t.Fatal("the writer held back by flow control did not turn the MAX_STREAM_DATA event on")
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case err := <-wrote:
				t.Fatalf("64 KiB written against 4 KiB of credit before the peer read: %v", err)
			default:
			}
			r, err := srv.AcceptStream(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			r.SetReadDeadline(time.Now().Add(30 * time.Second))
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, total)
			}
			if err := <-wrote; err != nil {
				t.Fatalf("write: %v", err)
			}
			if got := on(); got != asked {
				t.Errorf("MAX_STREAM_DATA event on after the writer finished: %v, want %v", got, asked)
			}
		})
	}
}

// TestFuncWriteDeadlineIsPerStream: a deadline passing on one stream's
// blocked write fails that write only; a write on another stream waiting at
// the same time, without a deadline, goes on once the peer reads, and so do
// datagrams sent meanwhile.
//
// The server's connection holds at most 64 KiB of unread stream data (its
// limit lowered from maxBuffered's 8 MiB) and gives each stream 4 KiB of
// credit, so 256 KiB on a stream is more than it takes before its
// application reads: the writers wait for credit whatever the machine's
// speed. The test waits for that state (WaitHeld), not for a time, and
// reads stream b with a deadline renewed on every read that makes progress.
func TestFuncWriteDeadlineIsPerStream(t *testing.T) {
	const limit = 64 << 10
	defer kquic.SetBufferLimit(limit)()
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamDataBidiRemote: 4096, MaxDatagramFrameSize: 1200}}
	cli, srv := pair(t, &kquic.Config{Transport: kquic.TransportParameters{MaxDatagramFrameSize: 1200}}, scfg)
	a, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	b, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	// Stream b fills what the peer's connection takes into userspace and
	// its writer waits for credit.
	data := bytes.Repeat([]byte("x"), 4*limit)
	bDone := make(chan error, 1)
	go func() {
		_, err := b.Write(data) // no deadline
		if err == nil {
			err = b.Close()
		}
		bDone <- err
	}()
	if err := kquic.WaitHeld(ctxT(t), srv); err != nil {
		t.Fatalf("the server never held its %d bytes of stream b: %v", limit, err)
	}
	select {
	case err := <-bDone:
		t.Fatalf("%d bytes written against %d of buffer and 4 KiB of credit before the peer read: %v", len(data), limit, err)
	default:
	}
	a.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
	start := time.Now()
	_, err = a.Write(data)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past its deadline = %v, want os.ErrDeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the deadline of 500ms ended the write after %v", d)
	}
	// A deadline set while a write waits ends it too.
	aDone := make(chan error, 1)
	a.SetWriteDeadline(time.Time{})
	go func() { _, err := a.Write(data); aDone <- err }()
	time.Sleep(200 * time.Millisecond)
	a.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	select {
	case err := <-aDone:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("write whose deadline was set while it waited = %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a deadline set while the write waited did not end it")
	}
	select {
	case err := <-bDone:
		t.Fatalf("the other stream's write ended while it had no credit: %v", err)
	default:
	}
	for i := 0; i < 5; i++ {
		if err := cli.SendDatagram([]byte("ping")); err != nil {
			t.Fatalf("SendDatagram beside waiting writes: %v", err)
		}
	}
	// The peer reads stream b: its writer goes on to the end.
	ctx := ctxT(t)
	for {
		r, err := srv.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.StreamID() != b.StreamID() {
			go io.Copy(io.Discard, r)
			continue
		}
		got, err := readProgressing(r, 30*time.Second)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("stream b: read %d bytes (%v), want the %d written", len(got), err, len(data))
		}
		break
	}
	if err := <-bDone; err != nil {
		t.Fatalf("stream b's write: %v", err)
	}
}

// readProgressing reads r to its end, failing only when a read makes no
// progress within idle: it asserts that data keeps coming, not how fast.
func readProgressing(r *kquic.Stream, idle time.Duration) ([]byte, error) {
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		r.SetReadDeadline(time.Now().Add(idle))
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

// TestFuncConnectionCredit: a writer held back by the connection's flow
// control (MAX_DATA) with plenty of stream credit gets going again when the
// peer reads. The kernel has no event for connection credit, only EPOLLOUT,
// which the connection watches on a second descriptor while a writer
// waits: with the fallback retry (connCreditRetry) pushed out to an hour,
// the transfer goes on through EPOLLOUT alone; the second descriptor is
// closed once no writer waits.
func TestFuncConnectionCredit(t *testing.T) {
	defer kquic.SetConnCreditRetry(time.Hour)()
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxData: 64 << 10, MaxStreamDataBidiRemote: 64 << 20}}
	cli, srv := pair(t, nil, scfg)
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	const total = 16 << 20
	data := bytes.Repeat([]byte("0123456789abcdef"), total/16)
	wrote := make(chan error, 1)
	go func() {
		_, err := s.Write(data)
		if err == nil {
			err = s.Close()
		}
		wrote <- err
	}()
	r, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(60 * time.Second))
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, total)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write: %v", err)
	}
	if kquic.CreditWatched(cli) {
		t.Error("the connection still watches for credit with no writer waiting")
	}
}

// TestModuleBugStaleCredit reproduces the module's bug that creditSafeRead
// works around: a window update's MAX_DATA frame carries the limit from
// before the update. A receiver that takes a whole window in one recvmsg
// then makes the only update, a stale one, and the transfer stops.
func TestModuleBugStaleCredit(t *testing.T) {
	restore := kquic.DisableCreditSafeRead()
	scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxData: 64 << 10, MaxStreamDataBidiRemote: 64 << 20}}
	cli, srv := pair(t, nil, scfg)
	restore()
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 256<<10)
	go func() {
		s.Write(data)
		s.Close()
	}()
	r, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1<<20)
	n := 0
	for {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			stalled := errors.Is(err, os.ErrDeadlineExceeded) && n == 64<<10
			testenv.ModuleBug(t, bugStaleCredit, stalled, fmt.Sprintf("the receiver read %d bytes with one 1 MiB buffer, then nothing for 5 s (%v)", n, err))
			if !stalled && (err != io.EOF || n != len(data)) {
				t.Fatalf("read %d bytes: %v", n, err)
			}
			return
		}
	}
}

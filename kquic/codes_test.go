//go:build linux

package kquic_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// TestErrorCodeWidths: the kernel carries codes of 32 bits. The largest,
// MaxErrorCode, reaches the peer whole as a reset's, a STOP_SENDING's and a
// close's code; one more is refused with ErrCodeTooLarge, sends nothing, and
// leaves the stream and the connection working.
func TestErrorCodeWidths(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	const most, wide = kquic.MaxErrorCode, kquic.MaxErrorCode + 1
	var serr *kquic.StreamError

	s, _ := cli.OpenStream()
	if _, err := s.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	ss, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	ss.SetReadDeadline(time.Now().Add(20 * time.Second))
	readN := func(n int) string {
		t.Helper()
		b := make([]byte, n)
		if _, err := io.ReadFull(ss, b); err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		return string(b)
	}
	readN(1)
	if err := s.CancelWrite(wide); !errors.Is(err, kquic.ErrCodeTooLarge) {
		t.Errorf("CancelWrite(MaxErrorCode+1) = %v, want an error matching ErrCodeTooLarge", err)
	}
	if err := ss.CancelRead(wide); !errors.Is(err, kquic.ErrCodeTooLarge) {
		t.Errorf("CancelRead(MaxErrorCode+1) = %v, want an error matching ErrCodeTooLarge", err)
	}
	if _, err := s.Write([]byte("b")); err != nil {
		t.Fatalf("write after the refused codes: %v", err)
	}
	if got := readN(1); got != "b" {
		t.Fatalf("read after the refused codes: %q", got)
	}
	// RESET_STREAM with the largest code.
	if err := s.CancelWrite(most); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(ss); !errors.As(err, &serr) || !serr.Remote || serr.ErrorCode != most {
		t.Errorf("read after the peer's CancelWrite(MaxErrorCode) = %v, want a remote StreamError with code %#x", err, uint64(most))
	}

	// STOP_SENDING with the largest code: the kernel resets our side with it.
	s, _ = cli.OpenStream()
	s.Write([]byte("a"))
	ss, err = srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.CancelRead(most); err != nil {
		t.Fatal(err)
	}
	s.SetWriteDeadline(time.Now().Add(20 * time.Second))
	chunk := bytes.Repeat([]byte("y"), 1000)
	for i := 0; i < 2000 && err == nil; i++ {
		_, err = s.Write(chunk)
		time.Sleep(time.Millisecond)
	}
	if !errors.As(err, &serr) || !serr.Remote || serr.ErrorCode != most {
		t.Errorf("write after the peer's CancelRead(MaxErrorCode) = %v, want a remote StreamError with code %#x", err, uint64(most))
	}

	// The connection's close.
	if err := cli.CloseWithError(wide, "wide"); !errors.Is(err, kquic.ErrCodeTooLarge) {
		t.Fatalf("CloseWithError(MaxErrorCode+1) = %v, want an error matching ErrCodeTooLarge", err)
	}
	if err := cli.Err(); err != nil {
		t.Fatalf("the refused close ended the connection: %v", err)
	}
	if got := echoAfter(t, cli, srv, "still open"); got != "still open" {
		t.Fatalf("echo after the refused close: %q", got)
	}
	if err := cli.CloseWithError(most, "most"); err != nil {
		t.Fatal(err)
	}
	<-srv.Done()
	var ce *kquic.CloseError
	if err := srv.Err(); !errors.As(err, &ce) || !ce.Remote || !ce.Application || ce.ErrorCode != most || ce.Reason != "most" {
		t.Errorf("the peer's CloseWithError(MaxErrorCode) reads as %v, want an application close with code %#x", err, uint64(most))
	}
}

// echoAfter sends msg on a new stream of a and reads it on b.
func echoAfter(t *testing.T, a, b *kquic.Conn, msg string) string {
	t.Helper()
	s, err := a.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := b.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

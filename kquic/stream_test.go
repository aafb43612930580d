//go:build linux

package kquic_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"testing"

	"kquic.dev/kquic"
)

func TestEcho(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	if cs := cli.ConnectionState(); cs.NegotiatedProtocol != "kq" {
		t.Errorf("ALPN %q", cs.NegotiatedProtocol)
	}
	go func() {
		s, err := srv.AcceptStream(ctxT(t))
		if err != nil {
			return
		}
		io.Copy(s, s)
		s.Close()
	}()
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if s.StreamID() != 0 {
		t.Errorf("first client stream ID %d, want 0", s.StreamID())
	}
	msg := []byte("hello kernel QUIC")
	if _, err := s.Write(msg); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

func TestBulkTransferHash(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	const size = 32 << 20
	sum := make(chan [32]byte, 1)
	go func() {
		s, err := srv.AcceptStream(ctxT(t))
		if err != nil {
			return
		}
		h := sha256.New()
		io.Copy(h, s)
		var d [32]byte
		copy(d[:], h.Sum(nil))
		sum <- d
	}()
	s, err := cli.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(s, h), io.LimitReader(rand.Reader, size)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := <-sum; !bytes.Equal(got[:], h.Sum(nil)) {
		t.Fatal("SHA-256 of the received data differs")
	}
}

func TestResetAndStopSending(t *testing.T) {
	cli, srv := pair(t, nil, nil)
	s, _ := cli.OpenStream()
	s.Write([]byte("x"))
	ss, err := srv.AcceptStream(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CancelWrite(7); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	var serr *kquic.StreamError
	for {
		_, err = ss.Read(buf)
		if err != nil {
			break
		}
	}
	if !errors.As(err, &serr) || serr.ErrorCode != 7 || !serr.Remote {
		t.Fatalf("read after peer reset = %v, want StreamError code 7", err)
	}
	// Stop sending: the peer's writes fail with our code.
	s2, _ := cli.OpenStream()
	s2.Write([]byte("y"))
	ss2, _ := srv.AcceptStream(ctxT(t))
	if err := ss2.CancelRead(9); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if _, err = s2.Write(make([]byte, 1000)); err != nil {
			break
		}
	}
	if !errors.As(err, &serr) || serr.ErrorCode != 9 {
		t.Fatalf("write after STOP_SENDING = %v, want StreamError code 9", err)
	}
}

//go:build linux

package iouring_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/iouring"
)

func newRing(t *testing.T) *iouring.Ring {
	t.Helper()
	r, err := iouring.New(8, 256)
	if errors.Is(err, iouring.ErrNotSupported) {
		t.Skipf("no io_uring for this process: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestSendZCOverTCP: messages sent with IORING_OP_SEND_ZC on a TCP socket
// arrive whole and in order (the receiver's hash), every send's
// notification comes, and on loopback the kernel reports that it copied
// (the pages are delivered on this host).
func TestSendZCOverTCP(t *testing.T) {
	r := newRing(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sums := make(chan [32]byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			sums <- [32]byte{}
			return
		}
		defer c.Close()
		h := sha256.New()
		io.Copy(h, c)
		sums <- [32]byte(h.Sum(nil))
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("kqbench io_uring send_zc "), 2600) // 65 KB
	const count = 200
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	sends := 0
	raw.Control(func(fd uintptr) {
		for i := 0; i < count && sendErr == nil; i++ {
			for p := msg; len(p) > 0; {
				n, err := r.SendZC(int(fd), p, 0)
				if errors.Is(err, unix.EAGAIN) {
					pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
					unix.Poll(pfd, 1000)
					continue
				}
				if err != nil {
					sendErr = err
					break
				}
				sends++
				p = p[n:]
			}
			// At most 64 buffers in flight: the notifications bound it.
			if err := r.Wait(64); err != nil {
				sendErr = err
			}
		}
	})
	if sendErr != nil {
		t.Fatal(sendErr)
	}
	if err := r.Wait(0); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got, want := <-sums, sha256.Sum256(bytes.Repeat(msg, count)); got != want {
		t.Errorf("the receiver's hash differs from the messages'")
	}
	n := r.Notes()
	t.Logf("%d messages of %d bytes in %d sends: %d notifications, %d copied", count, len(msg), sends, n.Done, n.Copied)
	if n.Done != int64(sends) || r.Pending() != 0 {
		t.Errorf("%d sends, %d notifications, %d pending", sends, n.Done, r.Pending())
	}
	if n.Copied != n.Done {
		t.Errorf("loopback: %d of %d notifications say the kernel copied, want all", n.Copied, n.Done)
	}
}

// TestSendZCErrors: the kernel's errno comes back as it is, named.
func TestSendZCErrors(t *testing.T) {
	r := newRing(t)
	f, err := os.CreateTemp(t.TempDir(), "notasocket")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = r.SendZC(int(f.Fd()), []byte("x"), 0)
	var se *os.SyscallError
	if !errors.Is(err, unix.ENOTSOCK) || !errors.As(err, &se) || se.Syscall != "io_uring send_zc" {
		t.Errorf("send_zc on a file: %v, want ENOTSOCK from io_uring send_zc", err)
	}
	if _, err := iouring.New(0, 256); err == nil || errors.Is(err, iouring.ErrNotSupported) {
		t.Errorf("New(0 entries): %v, want the kernel's EINVAL", err)
	}
}

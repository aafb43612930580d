//go:build linux

package quicsock

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/parked"
	"kquic.dev/internal/racedetect"
)

// pair returns two connected datagram sockets in the poller. Msg makes plain
// sendmsg/recvmsg calls, so a Unix socket pair exercises it on any kernel.
func pair(t *testing.T) (*Socket, *Socket) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fromFD(fds[0], "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fromFD(fds[1], "b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestMsgSendRecv(t *testing.T) {
	a, b := pair(t)
	send, recv := a.NewMsg(), b.NewMsg()
	for _, size := range []int{1, 1000, 60000} {
		p := bytes.Repeat([]byte{byte(size)}, size)
		n, err := send.Send(p, nil, 0)
		if err != nil || n != size {
			t.Fatalf("Send(%d bytes) = %d, %v", size, n, err)
		}
		buf := make([]byte, 65536)
		n, oobn, flags, err := recv.Recv(buf, make([]byte, 64), 0)
		if err != nil || n != size || oobn != 0 || !bytes.Equal(buf[:n], p) {
			t.Fatalf("Recv = %d bytes (oob %d, flags %#x), %v; want the %d bytes sent", n, oobn, flags, err, size)
		}
	}
	// A short buffer truncates the datagram, and says so in the flags.
	send.Send([]byte("0123456789"), nil, 0)
	buf := make([]byte, 4)
	n, _, flags, err := recv.Recv(buf, nil, 0)
	if err != nil || n != 4 || flags&unix.MSG_TRUNC == 0 || string(buf) != "0123" {
		t.Fatalf("Recv into 4 bytes = %d %q, flags %#x, %v; want 4 bytes and MSG_TRUNC", n, buf, flags, err)
	}
}

// recvFunc is Recv as runtime.Stack names it.
const recvFunc = "kquic.dev/internal/quicsock.(*Msg).Recv"

func TestMsgDontWaitAndWait(t *testing.T) {
	a, b := pair(t)
	recv := b.NewMsg()
	buf := make([]byte, 16)
	if _, _, _, err := recv.Recv(buf, nil, unix.MSG_DONTWAIT); !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("Recv(MSG_DONTWAIT) on an empty socket: %v, want EAGAIN", err)
	}
	// Without MSG_DONTWAIT, Recv parks in the poller until data comes:
	// sent once it is seen waiting there.
	type got struct {
		n   int
		err error
	}
	late := make(chan got, 1)
	go func() { n, _, _, err := recv.Recv(buf, nil, 0); late <- got{n, err} }()
	parked.Wait(t, recvFunc)
	a.NewMsg().Send([]byte("late"), nil, 0)
	if g := <-late; g.err != nil || string(buf[:g.n]) != "late" {
		t.Fatalf("waiting Recv = %q, %v; want \"late\"", buf[:g.n], g.err)
	}
	// The read deadline bounds the wait; Close ends it.
	b.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	if _, _, _, err := recv.Recv(buf, nil, 0); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Recv past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	b.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, _, _, err := recv.Recv(buf, nil, 0); done <- err }()
	parked.Wait(t, recvFunc)
	b.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Recv on a closed socket succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Recv")
	}
	if _, _, _, err := recv.Recv(nil, nil, 0); err == nil {
		t.Fatal("Recv into an empty buffer succeeded")
	}
}

func TestMsgSendFull(t *testing.T) {
	a, _ := pair(t)
	unix.SetsockoptInt(int(a.File().Fd()), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
	send := a.NewMsg()
	p := make([]byte, 1024)
	for i := 0; ; i++ {
		_, err := send.Send(p, nil, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil || i > 10000 {
			t.Fatalf("filling the socket: %v after %d sends", err, i)
		}
	}
	a.SetWriteDeadline(time.Now().Add(30 * time.Millisecond))
	if _, err := send.Send(p, nil, 0); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Send on a full socket past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestMsgDoesNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" || racedetect.Enabled {
		t.Skip("allocation counts differ under -cover and -race")
	}
	a, b := pair(t)
	send, recv := a.NewMsg(), b.NewMsg()
	p, buf, oob := make([]byte, 512), make([]byte, 1024), make([]byte, 64)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := send.Send(p, nil, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := recv.Recv(buf, oob, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("a Send and a Recv allocate %.1f times, want 0", allocs)
	}
}

// TestDup: the second descriptor is registered with the poller on its own
// (a wait for EPOLLOUT on it returns once the socket is writable, without
// the first's write lock), and closing it leaves the socket open.
func TestDup(t *testing.T) {
	a, b := pair(t)
	f, err := a.Dup()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Fill a's small send buffer (datagrams b holds unread count against
	// it) until a can send no more: a is then not writable, and an EPOLLOUT
	// comes when b takes a datagram and frees its memory. (An idle
	// writable socket reports no new edge: the first call's false would
	// then wait for good.)
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096) })
	fill := make([]byte, 1000)
	for {
		_, err := a.SendMsg(fill, nil, unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	done := make(chan error, 1)
	g := parked.Go(func() { done <- rc.Write(func(uintptr) bool { calls++; return calls == 2 }) })
	g.Wait(t, "internal/poll.(*FD).RawWrite")
	// b takes every datagram: a counts as writable again once under a
	// quarter of its buffer is in use (unix_writable).
	buf := make([]byte, 2048)
	for {
		if _, _, _, err := b.RecvMsg(buf, nil, unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	select {
	case err := <-done:
		if err != nil || calls != 2 {
			t.Fatalf("wait for EPOLLOUT on the second descriptor: %v after %d calls", err, calls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no EPOLLOUT on the second descriptor when the socket became writable")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendMsg([]byte("still open"), nil, 0); err != nil {
		t.Fatalf("send after closing the second descriptor: %v", err)
	}
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _, _, err := b.RecvMsg(buf, nil, 0); err != nil || string(buf[:n]) != "still open" {
		t.Fatalf("recv: %q, %v", buf[:n], err)
	}
}

//go:build linux

package side

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// A socketStream is a stream that is a whole TCP socket, which its pump
// moves with blocking read(2) and write(2) on its own thread, as a C tool
// (iperf3) does, rather than through Go's poller, where $KQBENCH_SOCKET_PUMPS
// asks for it (SocketPumpsEnv). A pump that waits in the poller parks its
// goroutine, and a pump pinned to its thread (LockOSThread) is then woken by
// another thread (the one that polled) handing it back: futex and
// epoll_pwait calls and thread switches for every wait. A blocking call
// waits in the kernel, woken by the socket's own wake-up. Measured on a
// 2-CPU VM (docs/measurements/go-ends.md), the socket pumps cut the
// runtime's futex time per GB by about 85% but moved the receiver's wake-ups
// onto the sender's CPU: the CPU per GB did not change beyond the noise, the
// goodput on the quiet machine neither (both at about 1.06 of iperf3's), and
// under load it fell, so they stay an option (BenchmarkTCPAgainstIperf3 in
// bench/mode/bulk measures both).
//
// Only a *net.TCPConn qualifies: its descriptor carries the one stream and
// nothing else (a kTLS socket's records and a QUIC socket's frames and
// events do not pass through plain read(2)). The bytes counted are read(2)'s
// returns, as iperf3 counts.
type socketStream struct {
	io.ReadWriteCloser
	rc syscall.RawConn
}

// SocketPumpsEnv, set to anything, has the pumps move a TCP stream's bytes
// with blocking system calls (see socketStream); unset, every stream's go
// through Go's poller.
const SocketPumpsEnv = "KQBENCH_SOCKET_PUMPS"

// asSocket is s as a socketStream, its descriptor made blocking, or nil
// when s is no TCP socket or its descriptor cannot be had.
func asSocket(s io.ReadWriteCloser) *socketStream {
	tc, ok := s.(*net.TCPConn)
	if !ok || os.Getenv(SocketPumpsEnv) == "" {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), false) }); err != nil || serr != nil {
		return nil
	}
	return &socketStream{s, rc}
}

// wake makes the stream's blocked read(2) or write(2) return (shutdown(2)
// wakes both; a close(2) from another thread wakes neither), before Close,
// which waits for the call to end (Go's descriptor is closed when its last
// user is done).
func (s *socketStream) wake() {
	s.rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
}

// Close wakes the stream's pump and closes the socket.
func (s *socketStream) Close() error {
	s.wake()
	return s.ReadWriteCloser.Close()
}

// send writes buf until a write fails or stop is closed, each write(2)
// on the calling thread.
func (s *socketStream) send(buf []byte, stop <-chan struct{}) {
	runtime.LockOSThread() // the thread ends with the pump's goroutine
	s.rc.Write(func(fd uintptr) bool {
		for {
			for b := buf; len(b) > 0; {
				n, err := unix.Write(int(fd), b)
				if err != nil && !errors.Is(err, unix.EINTR) {
					return true
				}
				b = b[max(n, 0):]
			}
			select {
			case <-stop:
				return true
			default:
			}
		}
	})
}

// receive reads into rb until a read fails or finds the stream's end,
// adding each read's bytes with count, each read(2) on the calling thread.
func (s *socketStream) receive(rb []byte, count func(int)) {
	runtime.LockOSThread()
	s.rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Read(int(fd), rb)
			if err != nil && errors.Is(err, unix.EINTR) {
				continue
			}
			if n <= 0 || err != nil {
				return true
			}
			count(n)
		}
	})
}

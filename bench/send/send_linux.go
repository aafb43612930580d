//go:build linux

package send

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/iouring"
)

// Counters are what the senders of one end did, added up over its streams.
// They change together under one lock, so that a reading (Map), and the
// difference of two, holds as many zero-copy sends as calls of a
// zero-copy method, and as many copied as completed where the kernel
// copies them all.
type Counters struct {
	mu                                     sync.Mutex
	calls, bytes, zcSent, zcDone, zcCopied int64
}

// sent counts one system call that sent n bytes, a zero-copy send if zc.
func (c *Counters) sent(n int, zc bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.bytes += int64(n)
	if zc {
		c.zcSent++
	}
}

// completed counts done zero-copy completions, copied of them copied.
func (c *Counters) completed(done, copied int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.zcDone += done
	c.zcCopied += copied
}

// pending is the zero-copy sends not completed yet.
func (c *Counters) pending() (pending, sent int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.zcSent - c.zcDone, c.zcSent
}

// Map is the counters by their results.Sample.Counters names; nil when
// nothing was sent.
func (c *Counters) Map() map[string]float64 {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]float64{CounterCalls: float64(c.calls), CounterBytes: float64(c.bytes)}
	if c.zcSent > 0 {
		m[CounterZCSent] = float64(c.zcSent)
		m[CounterZCDone] = float64(c.zcDone)
		m[CounterZCCopied] = float64(c.zcCopied)
	}
	return m
}

// A Sender sends one stream's messages by a send method.
type Sender interface {
	// Send sends the message whole, or fails.
	Send() error
	// Close releases what the sender holds (not the stream).
	Close() error
}

// ErrNoSocket is returned for a stream that has no socket of its own to
// send on by a method other than write (a userspace stack's).
var ErrNoSocket = errors.New("the stream has no socket of its own")

// syscallConn is a stream whose socket can be reached: *net.TCPConn,
// *ktls.Conn (while the kernel does TLS).
type syscallConn interface {
	SyscallConn() (syscall.RawConn, error)
}

// New makes the sender of msg on stream w by method m, counting into cnt.
func New(m string, w io.Writer, msg []byte, cnt *Counters) (Sender, error) {
	if err := Check(m); err != nil {
		return nil, err
	}
	if m == Write {
		return &writer{w: w, msg: msg, cnt: cnt}, nil
	}
	sc, ok := w.(syscallConn)
	if !ok {
		return nil, fmt.Errorf("%s on a %T: %w", m, w, ErrNoSocket)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m, err)
	}
	switch m {
	case Sendfile:
		return newSendfile(raw, msg, cnt)
	case ZeroCopy:
		return newZeroCopy(raw, msg, cnt)
	case UringZC:
		return newUringZC(raw, msg, cnt)
	}
	return nil, fmt.Errorf("send method %q is not built", m)
}

// writer is the write method through a Sender (the bulk mode's pumps call
// Write themselves).
type writer struct {
	w   io.Writer
	msg []byte
	cnt *Counters
}

func (s *writer) Send() error {
	n, err := s.w.Write(s.msg)
	s.cnt.sent(n, false)
	return err
}

func (*writer) Close() error { return nil }

func opError(op string, err error) error {
	return &os.SyscallError{Syscall: op, Err: err}
}

// sendfileSender sends the message with sendfile(2) from a memory file
// that holds it.
type sendfileSender struct {
	raw  syscall.RawConn
	file *os.File
	size int
	cnt  *Counters
}

func newSendfile(raw syscall.RawConn, msg []byte, cnt *Counters) (*sendfileSender, error) {
	fd, err := unix.MemfdCreate("kqbench-sendfile", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sendfile: the message's memory file: %w", opError("memfd_create", err))
	}
	f := os.NewFile(uintptr(fd), "kqbench-sendfile")
	if _, err := f.Write(msg); err != nil {
		f.Close()
		return nil, fmt.Errorf("sendfile: the message's memory file: %w", err)
	}
	return &sendfileSender{raw: raw, file: f, size: len(msg), cnt: cnt}, nil
}

func (s *sendfileSender) Send() error {
	var off int64
	in := int(s.file.Fd())
	for off < int64(s.size) {
		var n int
		var serr error
		err := s.raw.Write(func(fd uintptr) bool {
			n, serr = unix.Sendfile(int(fd), in, &off, s.size-int(off))
			return serr != unix.EAGAIN
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return opError("sendfile", err)
		}
		s.cnt.sent(n, false)
		if n == 0 {
			return opError("sendfile", io.ErrUnexpectedEOF)
		}
	}
	return nil
}

func (s *sendfileSender) Close() error { return s.file.Close() }

// zeroCopy sends with MSG_ZEROCOPY and reads the completions from the
// socket's error queue as they come (and when the socket's option memory
// is full: ENOBUFS).
type zeroCopy struct {
	raw syscall.RawConn
	msg []byte
	cnt *Counters
	oob []byte
}

func newZeroCopy(raw syscall.RawConn, msg []byte, cnt *Counters) (*zeroCopy, error) {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ZEROCOPY, 1)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("zerocopy: %w", opError("setsockopt SO_ZEROCOPY", serr))
	}
	return &zeroCopy{raw: raw, msg: msg, cnt: cnt, oob: make([]byte, 512)}, nil
}

func (z *zeroCopy) Send() error {
	p := z.msg
	for len(p) > 0 {
		var n int
		var serr error
		// Control, not Write: the completions make epoll report EPOLLERR
		// alone, after which the runtime's poller refuses to wait on the
		// socket ("not pollable"); this sender waits with poll(2) itself.
		err := z.raw.Control(func(fd uintptr) {
			n, serr = unix.SendmsgN(int(fd), p, nil, nil, unix.MSG_ZEROCOPY|unix.MSG_DONTWAIT)
			switch serr {
			case unix.EAGAIN, unix.ENOBUFS:
				// The socket's buffer is full, or the completions not yet
				// read hold its option memory: read them, and wait until
				// it can send or more complete.
				z.drain(int(fd))
				z.wait(int(fd), unix.POLLOUT)
				n, serr = 0, nil
			}
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return opError("sendmsg MSG_ZEROCOPY", err)
		}
		if n > 0 {
			z.cnt.sent(n, true)
			p = p[n:]
		}
	}
	return z.raw.Control(func(fd uintptr) { z.drain(int(fd)) })
}

// wait waits up to 100 ms for the socket to have events (or its error
// queue something: POLLERR), and reads the error queue.
func (z *zeroCopy) wait(fd int, events int16) {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
	unix.Poll(pfd, 100)
	z.drain(fd)
}

// Flush waits until every send has completed, up to limit.
func (z *zeroCopy) Flush(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		left, all := z.cnt.pending()
		if left <= 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zerocopy: %d of %d sends not completed after %v", left, all, limit)
		}
		if err := z.raw.Control(func(fd uintptr) { z.wait(int(fd), 0) }); err != nil {
			return err
		}
	}
}

// drain reads every completion on the socket's error queue.
func (z *zeroCopy) drain(fd int) {
	for {
		_, oobn, _, _, err := unix.Recvmsg(fd, nil, z.oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if err != nil {
			return
		}
		msgs, err := unix.ParseSocketControlMessage(z.oob[:oobn])
		if err != nil {
			return
		}
		for _, m := range msgs {
			if done, copied, ok := Completion(m); ok {
				c := int64(0)
				if copied {
					c = done
				}
				z.cnt.completed(done, c)
			}
		}
	}
}

// Completion reads a MSG_ZEROCOPY completion from an error-queue control
// message: how many sends it completes (the range ee_info..ee_data), and
// whether the kernel copied them (SO_EE_CODE_ZEROCOPY_COPIED); ok is
// false for any other message.
func Completion(m unix.SocketControlMessage) (done int64, copied, ok bool) {
	if !(m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) &&
		!(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
		return 0, false, false
	}
	if len(m.Data) < 16 { // struct sock_extended_err
		return 0, false, false
	}
	var e unix.SockExtendedErr
	e.Errno = binary.NativeEndian.Uint32(m.Data[0:])
	e.Origin, e.Type, e.Code = m.Data[4], m.Data[5], m.Data[6]
	e.Info = binary.NativeEndian.Uint32(m.Data[8:])
	e.Data = binary.NativeEndian.Uint32(m.Data[12:])
	if e.Origin != unix.SO_EE_ORIGIN_ZEROCOPY || e.Errno != 0 {
		return 0, false, false
	}
	return int64(e.Data-e.Info) + 1, e.Code&unix.SO_EE_CODE_ZEROCOPY_COPIED != 0, true
}

func (*zeroCopy) Close() error { return nil }

// uringZC sends with io_uring's IORING_OP_SEND_ZC, on a ring of its own,
// and counts the notifications that the kernel is done with the message's
// pages (and whether it copied them after all) as zerocopy counts its
// completions.
type uringZC struct {
	raw   syscall.RawConn
	ring  *iouring.Ring
	msg   []byte
	cnt   *Counters
	notes iouring.Notes // counted so far
}

// uringInFlight bounds the sends whose pages the kernel may still hold.
const uringInFlight = 256

func newUringZC(raw syscall.RawConn, msg []byte, cnt *Counters) (*uringZC, error) {
	r, err := iouring.New(8, 2*uringInFlight)
	if err != nil {
		return nil, fmt.Errorf("uring-zc: %w", err)
	}
	return &uringZC{raw: raw, ring: r, msg: msg, cnt: cnt}, nil
}

func (u *uringZC) Send() error {
	var serr error
	// Control: the ring's send and wait are system calls of this goroutine
	// on the socket's descriptor, as zerocopy's are.
	err := u.raw.Control(func(fd uintptr) {
		for p := u.msg; len(p) > 0 && serr == nil; {
			n, err := u.ring.SendZC(int(fd), p, 0)
			switch {
			case errors.Is(err, unix.EAGAIN):
				// The socket's buffer is full (a non-blocking socket):
				// wait until it can send.
				unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, 100)
			case err != nil:
				serr = err
			default:
				u.cnt.sent(n, true)
				p = p[n:]
			}
		}
		if serr == nil {
			serr = u.ring.Wait(uringInFlight)
		}
	})
	u.count()
	if err == nil {
		err = serr
	}
	return err
}

// count adds the notifications read since the last count.
func (u *uringZC) count() {
	n := u.ring.Notes()
	u.cnt.completed(n.Done-u.notes.Done, n.Copied-u.notes.Copied)
	u.notes = n
}

// Close releases the ring once the notifications still to come have come
// (the kernel holds the message's pages until then: until the peer has
// read them, or the socket is closed), waiting up to a second for them to
// count.
func (u *uringZC) Close() error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.ring.Wait(0)
		u.count()
		u.ring.Close()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return nil
}

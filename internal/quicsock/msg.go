//go:build linux

package quicsock

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Msg sends or receives messages on a socket without allocating: it keeps
// the msghdr, the iovec and the function the poller calls (Socket.SendMsg
// and RecvMsg make a Msg per call). A Msg serves one goroutine at a time;
// keep one per stream writer and one for the receiver.
//
// The system calls are raw (unix.RawSyscall): they always carry MSG_DONTWAIT
// and never sleep in the kernel (waiting is the poller's job), so telling
// the scheduler about them only costs. A sendmsg of kernel QUIC does the
// protocol's work - encryption, and on loopback the peer's receive too -
// inside the call (about 120 us in the TCG guest), longer than the
// runtime's 20 us sysmon tick, and sysmon otherwise hands the goroutine's P
// to another thread during each call, with futex wake-ups and spinning
// threads.
type Msg struct {
	s     *Socket
	hdr   unix.Msghdr
	iov   unix.Iovec
	flags int
	wait  bool
	recv  bool
	n     int
	errno error
	fn    func(fd uintptr) bool
}

// NewMsg returns a Msg for s.
func (s *Socket) NewMsg() *Msg {
	m := &Msg{s: s}
	m.fn = m.call
	if a := Around; a != nil {
		m.fn = func(fd uintptr) (done bool) {
			a(func() { done = m.call(fd) })
			return done
		}
	}
	return m
}

// call makes the system call for the poller: true when done (success, an
// error other than EAGAIN, or no waiting asked for).
func (m *Msg) call(fd uintptr) bool {
	nr := uintptr(unix.SYS_SENDMSG)
	if m.recv {
		nr = unix.SYS_RECVMSG
	}
	for {
		// MSG_DONTWAIT is always set, so the call never sleeps: make it
		// raw, without telling the scheduler (see the type's comment).
		r, _, e := unix.RawSyscall(nr, fd, uintptr(unsafe.Pointer(&m.hdr)), uintptr(m.flags))
		switch e {
		case 0:
			m.n, m.errno = int(r), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			m.n, m.errno = 0, unix.EAGAIN
			return !m.wait
		default:
			m.n, m.errno = 0, e
			return true
		}
	}
}

func (m *Msg) set(p, oob []byte, flags int) {
	m.hdr = unix.Msghdr{}
	m.iov = unix.Iovec{}
	if len(p) > 0 {
		m.iov.Base = &p[0]
		m.iov.SetLen(len(p))
		m.hdr.Iov = &m.iov
		m.hdr.SetIovlen(1)
	}
	if len(oob) > 0 {
		m.hdr.Control = &oob[0]
		m.hdr.SetControllen(len(oob))
	}
	m.wait = flags&unix.MSG_DONTWAIT == 0
	m.flags = flags | unix.MSG_DONTWAIT
}

// clear drops the references to the caller's buffers.
func (m *Msg) clear() {
	m.iov.Base, m.hdr.Iov, m.hdr.Control = nil, nil, nil
}

// Send is Socket.SendMsg without allocating. p may be empty (with a
// control message, as for a bare FIN).
func (m *Msg) Send(p, oob []byte, flags int) (int, error) {
	if f := m.s.fake; f != nil {
		wait := (<-chan struct{})(closedCh)
		if flags&unix.MSG_DONTWAIT == 0 {
			wait = f.wd.wait()
		}
		n, err := f.b.Send(p, oob, flags, wait)
		return n, f.waitErr(err)
	}
	m.set(p, oob, flags|unix.MSG_NOSIGNAL)
	m.recv = false
	err := m.s.rc.Write(m.fn)
	m.clear()
	if err != nil {
		return 0, err
	}
	return m.n, m.errno
}

// Recv is Socket.RecvMsg without allocating; it returns the lengths of the
// data and of the control messages, and the message's flags.
func (m *Msg) Recv(p, oob []byte, flags int) (n, oobn, rflags int, err error) {
	if len(p) == 0 {
		return 0, 0, 0, errors.New("quicsock: receive into an empty buffer")
	}
	if f := m.s.fake; f != nil {
		wait := (<-chan struct{})(closedCh)
		if flags&unix.MSG_DONTWAIT == 0 {
			wait = f.rd.wait()
		}
		n, oobn, rflags, err := f.b.Recv(p, oob, flags, wait)
		return n, oobn, rflags, f.waitErr(err)
	}
	m.set(p, oob, flags)
	m.recv = true
	err = m.s.rc.Read(m.fn)
	oobn, rflags = int(m.hdr.Controllen), int(m.hdr.Flags)
	m.clear()
	if err != nil {
		return 0, 0, 0, err
	}
	if m.errno != nil {
		return 0, 0, 0, m.errno
	}
	return m.n, oobn, rflags, nil
}

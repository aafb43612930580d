//go:build linux

package quicsock

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// Socket is a kernel QUIC socket.
type Socket struct {
	f    *os.File
	rc   syscall.RawConn
	fake *fake // a scripted kernel (NewFake), or nil
}

// Around, if set, makes each system call this package makes on a QUIC
// socket: f is the call. A coverage tracer (kquic.dev/kmod/kcov) sets it
// to make the calls on a thread it traces. Set it before any socket is
// opened, and leave it.
var Around func(f func())

// around makes the system call f through Around.
func around(f func()) {
	if a := Around; a != nil {
		a(f)
		return
	}
	f()
}

// New opens a QUIC socket of the family (unix.AF_INET or unix.AF_INET6).
func New(family int) (*Socket, error) {
	var (
		fd  int
		err error
	)
	around(func() {
		fd, err = unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, quicabi.IPPROTO_QUIC)
	})
	if err != nil {
		serr := os.NewSyscallError("socket", err)
		if errors.Is(err, unix.EPROTONOSUPPORT) || errors.Is(err, unix.EAFNOSUPPORT) {
			return nil, fmt.Errorf("open QUIC socket: %w: %w: the kernel QUIC module is not loaded (modprobe quic, or see kqbench doctor)", ErrNotSupported, serr)
		}
		return nil, fmt.Errorf("open QUIC socket: %w", serr)
	}
	return fromFD(fd, "quic")
}

func fromFD(fd int, name string) (*Socket, error) {
	f := os.NewFile(uintptr(fd), name) // non-blocking: registered with the poller
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Socket{f: f, rc: rc}, nil
}

// FromConn wraps the descriptor of an existing non-blocking QUIC socket
// (such as an *os.File), sharing it: closing the Socket does not close c.
func FromConn(c syscall.Conn) (*Socket, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &Socket{rc: rc}, nil
}

// RawConn gives access to the descriptor.
func (s *Socket) RawConn() syscall.RawConn { return s.rc }

// File is the socket's file, or nil for a socket wrapped by FromConn.
func (s *Socket) File() *os.File { return s.f }

// Close closes the socket and wakes every goroutine waiting on it.
func (s *Socket) Close() error {
	if s.fake != nil {
		s.fake.closeOnce.Do(func() {
			close(s.fake.closed)
			s.fake.rd.expire()
			s.fake.wd.expire()
		})
		return nil
	}
	if s.f == nil {
		return nil
	}
	var err error
	around(func() { err = s.f.Close() })
	return err
}

// SetReadDeadline and SetWriteDeadline bound the waits of RecvMsg, Accept
// and SendMsg.
func (s *Socket) SetReadDeadline(t time.Time) error {
	if s.fake != nil {
		s.fake.rd.set(t)
		return nil
	}
	if s.f == nil {
		return nil
	}
	return s.f.SetReadDeadline(t)
}

// SetWriteDeadline bounds the waits of SendMsg.
func (s *Socket) SetWriteDeadline(t time.Time) error {
	if s.fake != nil {
		s.fake.wd.set(t)
		return nil
	}
	if s.f == nil {
		return nil
	}
	return s.f.SetWriteDeadline(t)
}

func (s *Socket) control(fn func(fd int) error) error {
	if s.fake != nil {
		return errFakeUnsupported
	}
	var err error
	if cerr := s.rc.Control(func(fd uintptr) { around(func() { err = fn(int(fd)) }) }); cerr != nil {
		return cerr
	}
	return err
}

// Bind binds the socket to a local address.
func (s *Socket) Bind(ap netip.AddrPort) error {
	return s.control(func(fd int) error { return unix.Bind(fd, Sockaddr(ap)) })
}

// Connect sets the peer. For QUIC it sends nothing: it prepares the
// connection (Initial keys, connection IDs) for the handshake.
func (s *Socket) Connect(ap netip.AddrPort) error {
	return s.control(func(fd int) error { return unix.Connect(fd, Sockaddr(ap)) })
}

// Listen makes the socket a listener.
func (s *Socket) Listen(backlog int) error {
	return s.control(func(fd int) error { return unix.Listen(fd, backlog) })
}

// Accept waits for a connection request and returns its socket, which is
// still ESTABLISHING: its handshake has not run yet.
func (s *Socket) Accept() (*Socket, netip.AddrPort, error) {
	var (
		nfd int
		sa  unix.Sockaddr
		err error
	)
	if rerr := s.rc.Read(func(fd uintptr) bool {
		around(func() {
			for {
				nfd, sa, err = unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
				if err != unix.EINTR {
					break
				}
			}
		})
		return !errors.Is(err, unix.EAGAIN)
	}); rerr != nil {
		return nil, netip.AddrPort{}, rerr
	}
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	ns, err := fromFD(nfd, "quic")
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	return ns, AddrPort(sa), nil
}

// LocalAddr and RemoteAddr return the socket's addresses.
func (s *Socket) LocalAddr() (netip.AddrPort, error) {
	if s.fake != nil {
		return s.fake.local, nil
	}
	var ap netip.AddrPort
	err := s.control(func(fd int) error {
		sa, err := unix.Getsockname(fd)
		ap = AddrPort(sa)
		return err
	})
	return ap, err
}

// RemoteAddr returns the peer's address.
func (s *Socket) RemoteAddr() (netip.AddrPort, error) {
	if s.fake != nil {
		return s.fake.remote, nil
	}
	var ap netip.AddrPort
	err := s.control(func(fd int) error {
		sa, err := unix.Getpeername(fd)
		ap = AddrPort(sa)
		return err
	})
	return ap, err
}

// SetOption sets a SOL_QUIC option to the bytes b (nil for options that take
// no value).
func (s *Socket) SetOption(opt int, b []byte) error {
	if s.fake != nil {
		return s.fake.b.SetOption(opt, b)
	}
	return s.control(func(fd int) error {
		var p unsafe.Pointer
		if len(b) > 0 {
			p = unsafe.Pointer(&b[0])
		}
		_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), quicabi.SOL_QUIC, uintptr(opt), uintptr(p), uintptr(len(b)), 0)
		for e == unix.EINTR {
			_, _, e = unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), quicabi.SOL_QUIC, uintptr(opt), uintptr(p), uintptr(len(b)), 0)
		}
		if e != 0 {
			return e
		}
		return nil
	})
}

// GetOption reads a SOL_QUIC option into buf (which may carry input, as for
// STREAM_OPEN or CONNECTION_ID) and returns the bytes the kernel wrote.
func (s *Socket) GetOption(opt int, buf []byte) ([]byte, error) {
	if s.fake != nil {
		return s.fake.b.GetOption(opt, buf)
	}
	n := uint32(len(buf))
	err := s.control(func(fd int) error {
		var p unsafe.Pointer
		if len(buf) > 0 {
			p = unsafe.Pointer(&buf[0])
		}
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), quicabi.SOL_QUIC, uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(&n)), 0)
		for e == unix.EINTR {
			n = uint32(len(buf))
			_, _, e = unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), quicabi.SOL_QUIC, uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(&n)), 0)
		}
		if e != 0 {
			return e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// SetSockoptInt sets an integer option at another level (SOL_SOCKET, ...).
func (s *Socket) SetSockoptInt(level, opt, v int) error {
	return s.control(func(fd int) error { return unix.SetsockoptInt(fd, level, opt, v) })
}

// SetMigrationAddr sets QUIC_SOCKOPT_CONNECTION_MIGRATION to an address.
func (s *Socket) SetMigrationAddr(ap netip.AddrPort) error {
	return s.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_MIGRATION, SockaddrBytes(ap))
}

// HungUp reports, without waiting, whether the connection has closed: the
// kernel then reports POLLHUP. It reports false for a socket made by NewFake.
func (s *Socket) HungUp() bool {
	var hup bool
	err := s.control(func(fd int) error {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(p, 0)
			if err != unix.EINTR {
				hup = err == nil && p[0].Revents&unix.POLLHUP != 0
				return err
			}
		}
	})
	return err == nil && hup
}

// SendMsg sends p with the control message oob. Unless flags has
// MSG_DONTWAIT, it waits (in the poller, bounded by the write deadline) while
// the kernel says EAGAIN. It is a Msg used once; keep a Msg for hot paths.
func (s *Socket) SendMsg(p, oob []byte, flags int) (int, error) {
	return s.NewMsg().Send(p, oob, flags)
}

// RecvMsg receives one item (stream data, a handshake chunk, an event or a
// datagram). Unless flags has MSG_DONTWAIT, it waits in the poller, bounded
// by the read deadline. It is a Msg used once; keep a Msg for hot paths.
func (s *Socket) RecvMsg(p, oob []byte, flags int) (n, oobn, rflags int, err error) {
	return s.NewMsg().Recv(p, oob, flags)
}

// WaitWritable waits until the poller reports the socket writable (or the
// write deadline passes, or the socket closes).
func (s *Socket) WaitWritable() error {
	first := true
	return s.rc.Write(func(uintptr) bool {
		if first {
			first = false
			return false
		}
		return true
	})
}

// Dup returns a second descriptor of the socket as a file registered with
// the poller on its own: waiting on its writability (EPOLLOUT) holds
// neither the socket's write lock nor its deadlines. The socket lives until
// both are closed.
func (s *Socket) Dup() (*os.File, error) {
	var nfd int
	err := s.control(func(fd int) error {
		var err error
		nfd, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "quic-dup"), nil // non-blocking: pollable
}

// Sockaddr converts an address to the form the system calls take.
func Sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	sa := &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	if z := ap.Addr().Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa
}

// SockaddrBytes encodes an address as a struct sockaddr_in or sockaddr_in6.
func SockaddrBytes(ap netip.AddrPort) []byte {
	port := ap.Port()
	if ap.Addr().Is4() {
		b := make([]byte, unix.SizeofSockaddrInet4)
		*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_INET
		b[2], b[3] = byte(port>>8), byte(port)
		a := ap.Addr().As4()
		copy(b[4:8], a[:])
		return b
	}
	b := make([]byte, unix.SizeofSockaddrInet6)
	*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_INET6
	b[2], b[3] = byte(port>>8), byte(port)
	a := ap.Addr().As16()
	copy(b[8:24], a[:])
	return b
}

// AddrPort converts a socket address from the system calls.
func AddrPort(sa unix.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}

// Family returns the address family for an address.
func Family(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

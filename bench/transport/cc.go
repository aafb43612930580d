//go:build linux

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// setTCPCongestion sets TCP_CONGESTION on the socket fd.
func setTCPCongestion(fd int, cc string) error {
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("TCP_CONGESTION %s: the kernel has no such algorithm (load tcp_%s: modprobe tcp_%s, or --load tcp_%s in the guest)", cc, cc, cc, cc)
		}
		return fmt.Errorf("TCP_CONGESTION %s: %w", cc, err)
	}
	return nil
}

// tcpControl is a net.Dialer/ListenConfig Control that sets the congestion
// control (none when cc is ""). Accepted connections inherit the
// listener's.
func tcpControl(cc string) func(network, address string, c syscall.RawConn) error {
	if cc == "" {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = setTCPCongestion(int(fd), cc) }); err != nil {
			return err
		}
		return serr
	}
}

// TCPCongestion reads back a TCP connection's congestion control
// (getsockopt TCP_CONGESTION).
func TCPCongestion(c syscall.Conn) (string, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return "", err
	}
	var name string
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		name, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return "", err
	}
	return name, gerr
}

// listenTCP listens on addr with the options' congestion control.
func listenTCP(addr string, o Options) (*net.TCPListener, error) {
	lc := net.ListenConfig{Control: tcpControl(o.CC)}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, err
	}
	return ln.(*net.TCPListener), nil
}

// tcpNetDialer is a net.Dialer with the options' congestion control.
func tcpNetDialer(o Options) *net.Dialer { return &net.Dialer{Control: tcpControl(o.CC)} }

// tcpSupport says what the options mean for a TCP-based transport.
func tcpSupport(o Options) string {
	s := ""
	if o.CC != "" {
		s += "; TCP_CONGESTION " + o.CC
	}
	if o.Window > 0 {
		s += "; --window applies to the QUIC transports (TCP autotunes its window up to net.ipv4.tcp_rmem)"
	}
	return s
}

//go:build unix

package web

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// rcvBuf reads the socket's SO_RCVBUF.
func rcvBuf(c *net.UDPConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var serr error
	if err := raw.Control(func(fd uintptr) { n, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) }); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, fmt.Errorf("getsockopt SO_RCVBUF: %w", serr)
	}
	return n, nil
}

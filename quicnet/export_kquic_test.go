//go:build kquic && linux

package quicnet

import "kquic.dev/kquic"

// KquicConn is the kernel QUIC connection under c, for tests that read
// its socket.
func KquicConn(c *Conn) *kquic.Conn { return c.impl.c }

//go:build linux && (kquic || !nokquic)

package quicnet

import "kquic.dev/kquic"

// KquicConn is the kernel QUIC connection under c (a Kernel one), for
// tests that read its socket.
func KquicConn(c *Conn) *kquic.Conn { return c.impl.(kConn).c }

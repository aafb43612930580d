//go:build linux

package kquic

import "kquic.dev/internal/quicabi"

// KernelEventOn reports whether the kernel delivers events of type t on
// c's socket (whatever the application asked for).
func KernelEventOn(c *Conn, t EventType) (bool, error) {
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_EVENT, quicabi.EventOption{Type: quicabi.EventType(t)}.Marshal())
	if err != nil {
		return false, err
	}
	o, err := quicabi.UnmarshalEventOption(b)
	return o.On, err
}

// DisableCreditSafeRead turns the workaround for the module's stale credit
// updates off for connections made until restore is called.
func DisableCreditSafeRead() (restore func()) {
	noCreditSafeRead = true
	return func() { noCreditSafeRead = false }
}

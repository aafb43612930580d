package kquic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// DialEarly is [Dial] with 0-RTT data (RFC 9001 §4.6): data goes on the
// client's first bidirectional stream (ID 0), and when possible it leaves in
// 0-RTT packets, with the ClientHello, before the handshake completes.
//
// 0-RTT is possible when Config.TLS.ClientSessionCache holds a session for
// Config.TLS.ServerName from an earlier connection to a server that allowed
// early data ([Config.Allow0RTT] on a kquic listener), with the same ALPN
// protocol. The server's transport parameters are saved with the session
// (the kernel needs them to send 0-RTT data), so the session must have been
// stored by this package. Otherwise, or if the kernel does not take all of
// data at once, the rest is written once the handshake has completed.
// [Conn.EarlyDataAccepted] then says whether the server took 0-RTT data; a
// server that rejects it makes the kernel send it again in 1-RTT packets.
//
// The stream is returned open: write more, Close it to send FIN, read the
// reply. 0-RTT data can be replayed by an attacker (RFC 9001 §9.2): send
// only requests that are safe to repeat.
//
// When the data went as 0-RTT, no other bidirectional stream can be opened
// until stream 0 has ended in the kernel (the peer's FIN received, ours
// acknowledged, or a reset): the module hands out its ID again (README,
// known module bugs). Until then [Conn.OpenStream] fails with an error
// matching [ErrStreamLimit], and [Conn.OpenStreamSync] waits.
func DialEarly(ctx context.Context, network, address string, cfg *Config, data []byte) (*Conn, *Stream, error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	ap, err := resolve(ctx, network, address)
	if err != nil {
		return nil, nil, err
	}
	return DialAddrEarly(ctx, ap, cfg, data)
}

// DialAddrEarly is [DialEarly] with a resolved address.
func DialAddrEarly(ctx context.Context, addr netip.AddrPort, cfg *Config, data []byte) (*Conn, *Stream, error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	if !addr.IsValid() || addr.Addr().IsUnspecified() || addr.Port() == 0 {
		return nil, nil, fmt.Errorf("kquic: dial %v: need a specific address and port", addr)
	}
	sock, err := quicsock.New(quicsock.Family(addr.Addr()))
	if err != nil {
		return nil, nil, &net.OpError{Op: "dial", Net: "quic", Addr: net.UDPAddrFromAddrPort(addr), Err: err}
	}
	ew := &earlyWrite{sock: sock, data: data}
	c, err := dialSocket(ctx, sock, addr, cfg, ew)
	if err != nil {
		sock.Close()
		return nil, nil, err
	}
	c.mu.Lock()
	s := c.streams[0]
	c.mu.Unlock()
	if s == nil {
		if s, err = c.OpenStream(); err != nil {
			c.Close()
			return nil, nil, err
		}
	}
	if rest := data[ew.sent:]; len(rest) > 0 {
		if _, err := s.Write(rest); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("kquic: write the data that did not go as 0-RTT: %w", err)
		}
	}
	return c, s, nil
}

// earlyWrite sends a DialEarly's data as 0-RTT stream data during the
// handshake.
type earlyWrite struct {
	sock   *quicsock.Socket
	data   []byte
	opened bool // stream 0 exists in the kernel
	sent   int
}

// write runs once the 0-RTT key is in the kernel: what it takes now leaves
// in 0-RTT packets.
func (e *earlyWrite) write() error {
	if len(e.data) == 0 {
		return nil
	}
	oob := quicabi.StreamInfoCmsg(0, quicabi.MSG_QUIC_STREAM_NEW)
	n, err := e.sock.SendMsg(e.data, oob, unix.MSG_DONTWAIT)
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ENOSPC) {
			return nil // all of it goes after the handshake
		}
		return fmt.Errorf("send %d bytes on stream 0: %w", len(e.data), err)
	}
	e.opened = true
	e.sent = n
	return nil
}

// EarlyDataAccepted reports whether 0-RTT data was used on the connection:
// for a client (see [DialEarly]), that it sent 0-RTT data and the server
// accepted it; for a server ([Config.Allow0RTT]), that it accepted the
// client's 0-RTT data. The kernel delivers a server's 0-RTT stream data once
// the handshake has completed, like the rest.
func (c *Conn) EarlyDataAccepted() bool { return c.sess.EarlyDataAccepted() }

package kquic

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"kquic.dev/handshake"
	"kquic.dev/internal/quicabi"
	"kquic.dev/internal/quicsock"
)

// Dial connects to address ("host:port") over kernel QUIC and runs the TLS
// handshake. network is "udp", "udp4" or "udp6". The returned connection
// has completed its handshake; ctx and Config.HandshakeTimeout bound it.
func Dial(ctx context.Context, network, address string, cfg *Config) (*Conn, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ap, err := resolve(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return DialAddr(ctx, ap, cfg)
}

func resolve(ctx context.Context, network, address string) (netip.AddrPort, error) {
	switch network {
	case "udp", "udp4", "udp6":
	default:
		return netip.AddrPort{}, fmt.Errorf("kquic: network %q: use udp, udp4 or udp6", network)
	}
	ua, err := (&net.Resolver{}).LookupNetIP(ctx, "ip"+strings.TrimPrefix(network, "udp"), hostOf(address))
	if err != nil || len(ua) == 0 {
		return netip.AddrPort{}, fmt.Errorf("kquic: resolve %s: %w", address, err)
	}
	addr, err := net.ResolveUDPAddr(network, net.JoinHostPort(ua[0].Unmap().String(), portOf(address)))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("kquic: %s: %w", address, err)
	}
	// An IPv4 address must stay one: the kernel does not route an IPv6
	// QUIC socket to an IPv4-mapped address.
	ap := addr.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

func hostOf(a string) string {
	h, _, err := net.SplitHostPort(a)
	if err != nil {
		return a
	}
	return h
}

func portOf(a string) string {
	_, p, _ := net.SplitHostPort(a)
	return p
}

// DialAddr is Dial with a resolved address.
func DialAddr(ctx context.Context, addr netip.AddrPort, cfg *Config) (*Conn, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !addr.IsValid() || addr.Addr().IsUnspecified() || addr.Port() == 0 {
		return nil, fmt.Errorf("kquic: dial %v: need a specific address and port", addr)
	}
	sock, err := quicsock.New(quicsock.Family(addr.Addr()))
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "quic", Addr: net.UDPAddrFromAddrPort(addr), Err: err}
	}
	c, err := dialSocket(ctx, sock, addr, cfg, nil)
	if err != nil {
		sock.Close()
		return nil, err
	}
	return c, nil
}

// dialSocket connects and handshakes; early, if set, sends 0-RTT data.
func dialSocket(ctx context.Context, sock *quicsock.Socket, addr netip.AddrPort, cfg *Config, early *earlyWrite) (*Conn, error) {
	if err := cfg.apply(sock); err != nil {
		return nil, err
	}
	if len(cfg.Token) > 0 {
		if err := sock.SetOption(quicabi.QUIC_SOCKOPT_TOKEN, cfg.Token); err != nil {
			return nil, fmt.Errorf("kquic: set address validation token: %w", err)
		}
	}
	if err := sock.Connect(addr); err != nil {
		return nil, dialError(sock, addr, os.NewSyscallError("connect", err))
	}
	if err := cfg.applyInitialMaxUDPPayload(sock); err != nil {
		return nil, dialError(sock, addr, err)
	}
	hctx, cancel := context.WithTimeout(ctx, cfg.handshakeTimeout())
	defer cancel()
	var earlyFn func() error
	var pre []int64
	if early != nil {
		earlyFn = early.write
	}
	sess, err := handshake.ClientEarly(hctx, sock.File(), cfg.clientTLS(), earlyFn)
	if err != nil {
		return nil, dialError(sock, addr, err)
	}
	if early != nil && early.opened {
		pre = append(pre, 0)
	}
	c, err := newConn(sock, sess, cfg, true, pre...)
	if err != nil {
		sess.Close()
		return nil, err
	}
	return c, nil
}

// dialError is a failed dial as net reports one: the operation, both
// addresses, and the cause (a failed handshake matches net.ErrClosed; a
// system call's errno stays reachable with errors.Is).
func dialError(sock *quicsock.Socket, addr netip.AddrPort, err error) error {
	op := &net.OpError{Op: "dial", Net: "quic", Addr: net.UDPAddrFromAddrPort(addr), Err: err}
	if local, lerr := sock.LocalAddr(); lerr == nil && local.IsValid() {
		op.Source = net.UDPAddrFromAddrPort(local)
	}
	return op
}

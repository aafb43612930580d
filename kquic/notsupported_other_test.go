//go:build !linux

package kquic_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"kquic.dev/kquic"
)

// TestNotSupportedOffLinux: off Linux every entry point fails with a
// *net.OpError naming the operation that matches ErrNotSupported, and the
// types that carry values work as on Linux.
func TestNotSupportedOffLinux(t *testing.T) {
	ctx := context.Background()
	ap := netip.MustParseAddrPort("127.0.0.1:4433")
	check := func(name, op string, err error) {
		t.Helper()
		var oe *net.OpError
		if !errors.Is(err, kquic.ErrNotSupported) || !errors.As(err, &oe) || oe.Op != op {
			t.Errorf("%s = %v, want a %s *net.OpError matching ErrNotSupported", name, err, op)
		}
	}
	c, err := kquic.Dial(ctx, "udp", "127.0.0.1:4433", &kquic.Config{})
	if c != nil {
		t.Errorf("Dial returned a connection")
	}
	check("Dial", "dial", err)
	_, err = kquic.DialAddr(ctx, ap, &kquic.Config{})
	check("DialAddr", "dial", err)
	c, s, err := kquic.DialEarly(ctx, "udp", "127.0.0.1:4433", &kquic.Config{}, []byte("x"))
	if c != nil || s != nil {
		t.Errorf("DialEarly returned a connection or stream")
	}
	check("DialEarly", "dial", err)
	_, _, err = kquic.DialAddrEarly(ctx, ap, &kquic.Config{}, nil)
	check("DialAddrEarly", "dial", err)
	l, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{})
	if l != nil {
		t.Errorf("Listen returned a listener")
	}
	check("Listen", "listen", err)

	if got := kquic.EventKeyUpdate.String(); got != "KEY_UPDATE" {
		t.Errorf("EventKeyUpdate.String() = %q", got)
	}
	if !errors.Is(&kquic.CloseError{Remote: true}, net.ErrClosed) || !errors.Is(&kquic.IdleTimeoutError{}, net.ErrClosed) {
		t.Errorf("closes do not match net.ErrClosed")
	}
}

//go:build linux

package handshake

import (
	"errors"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// TestExplainClose: a call that fails because the connection has closed
// reports the close (with the kernel's record of it), also when the kernel
// says EINVAL because the socket is no longer establishing; an EINVAL on a
// socket that is still open stays what it is.
func TestExplainClose(t *testing.T) {
	refused := quicabi.ConnectionClose{ErrCode: 0x2, Phrase: "busy"}
	cases := []struct {
		name     string
		err      error
		hungUp   bool
		info     bool
		closed   bool // want a PeerClosedError
		askedHup bool // want hungUp called
	}{
		{"ENOTCONN", unix.ENOTCONN, false, true, true, false},
		{"EPIPE", unix.EPIPE, false, true, true, false},
		{"ECONNRESET", unix.ECONNRESET, false, true, true, false},
		{"EINVAL on a closed socket", unix.EINVAL, true, true, true, true},
		{"EINVAL on an open socket", unix.EINVAL, false, true, false, true},
		{"EINVAL on a closed socket, no close info", unix.EINVAL, true, false, false, true},
		{"EAGAIN", unix.EAGAIN, true, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			asked := false
			hungUp := func() bool { asked = true; return c.hungUp }
			info := func() (quicabi.ConnectionClose, bool) { return refused, c.info }
			err := &Error{"install the HANDSHAKE write secret (AES_GCM_128)", explainClose(c.err, hungUp, info, "")}
			if asked != c.askedHup {
				t.Errorf("hungUp asked: %v, want %v", asked, c.askedHup)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("%v: does not match %v", err, c.err)
			}
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("%v: does not match net.ErrClosed", err)
			}
			var pc *PeerClosedError
			if got := errors.As(err, &pc); got != c.closed {
				t.Fatalf("%v: a PeerClosedError: %v, want %v", err, got, c.closed)
			}
			if c.closed && (pc.Code != refused.ErrCode || pc.Phrase != refused.Phrase) {
				t.Errorf("%v: close %#x %q, want %#x %q", err, pc.Code, pc.Phrase, refused.ErrCode, refused.Phrase)
			}
			if c.err == unix.EINVAL && c.hungUp {
				want := "QUIC handshake: install the HANDSHAKE write secret (AES_GCM_128): the peer closed the connection during the handshake (code 0x2 CONNECTION_REFUSED, reason \"busy\"): it may have rejected our certificate, server name or ALPN list (the socket is no longer establishing, the connection has closed: invalid argument)"
				if !c.info {
					want = "QUIC handshake: install the HANDSHAKE write secret (AES_GCM_128): the socket is no longer establishing, the connection has closed: invalid argument"
				}
				if err.Error() != want {
					t.Errorf("prints\n\t%s\nwant\n\t%s", err, want)
				}
			}
		})
	}
}

// TestExplainCloseSide: the close record tells who closed by the phrase the
// handshake gave it (markClose): a record that still holds it is our
// kernel's own close (a *LocalCloseError, which no peer's phrase can
// fake: another handshake's marker differs), any other phrase, none
// included, the peer's; without a marker the record is the peer's, as
// before.
func TestExplainCloseSide(t *testing.T) {
	const marker = CloseMarkerPrefix + "0123456789abcdef)"
	// The kernel takes the phrase whole (at most 63 bytes), or not at all.
	if err := (quicabi.ConnectionClose{Phrase: marker}).Validate(); err != nil {
		t.Fatalf("the handshake's phrase %q: %v", marker, err)
	}
	cases := []struct {
		name   string
		rec    quicabi.ConnectionClose
		marker string
		local  bool
		want   string
	}{
		{"our kernel's protocol error", quicabi.ConnectionClose{ErrCode: 0xa, Frame: 0x8, Phrase: marker}, marker, true,
			"QUIC handshake: receive handshake data: our kernel closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION, frame type 0x8), not the peer: it found the peer's packets or transport parameters in error and sent the peer that CONNECTION_CLOSE (transport endpoint is not connected)"},
		{"our kernel's idle timer", quicabi.ConnectionClose{Phrase: marker}, marker, true,
			"QUIC handshake: receive handshake data: our kernel ended the connection during the handshake, with no CONNECTION_CLOSE from the peer: its idle timer ran out, or the peer sent a stateless reset (transport endpoint is not connected)"},
		{"the peer's, without a phrase", quicabi.ConnectionClose{ErrCode: 0xa}, marker, false,
			"QUIC handshake: receive handshake data: the peer closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION): it may have rejected our certificate, server name or ALPN list (transport endpoint is not connected)"},
		{"the peer's, with another handshake's marker", quicabi.ConnectionClose{ErrCode: 0xa, Phrase: CloseMarkerPrefix + "fedcba9876543210)"}, marker, false,
			"QUIC handshake: receive handshake data: the peer closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION, reason \"closed by the kernel's QUIC stack (kquic fedcba9876543210)\"): it may have rejected our certificate, server name or ALPN list (transport endpoint is not connected)"},
		{"no marker", quicabi.ConnectionClose{ErrCode: 0xa}, "", false,
			"QUIC handshake: receive handshake data: the peer closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION): it may have rejected our certificate, server name or ALPN list (transport endpoint is not connected)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := func() (quicabi.ConnectionClose, bool) { return c.rec, true }
			err := &Error{"receive handshake data", explainClose(unix.ENOTCONN, func() bool { return true }, info, c.marker)}
			var le *LocalCloseError
			var pe *PeerClosedError
			if got := errors.As(err, &le); got != c.local {
				t.Errorf("%v: a LocalCloseError: %v, want %v", err, got, c.local)
			}
			if got := errors.As(err, &pe); got == c.local {
				t.Errorf("%v: a PeerClosedError: %v, want %v", err, got, !c.local)
			}
			if !errors.Is(err, unix.ENOTCONN) || !errors.Is(err, net.ErrClosed) {
				t.Errorf("%v: does not match ENOTCONN and net.ErrClosed", err)
			}
			if err.Error() != c.want {
				t.Errorf("prints\n\t%s\nwant\n\t%s", err, c.want)
			}
		})
	}
}

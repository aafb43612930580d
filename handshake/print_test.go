package handshake

import (
	"errors"
	"testing"
)

// TestPrintsTheSameEverywhere pins what the errors print: this file builds on
// every platform and the errors are declared once (errors.go), so that
// `GOOS=darwin go test` checks the same table as Linux does.
func TestPrintsTheSameEverywhere(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&PeerClosedError{Code: 0x178, Frame: 0x6, Phrase: "no ALPN"},
			`the peer closed the connection during the handshake (code 0x178 CRYPTO_ERROR(alert 120: no application protocol), reason "no ALPN"): it may have rejected our certificate, server name or ALPN list`},
		{&PeerClosedError{Code: 0xc},
			`the peer closed the connection during the handshake (code 0xc APPLICATION_ERROR): it may have rejected our certificate, server name or ALPN list`},
		{&LocalCloseError{Code: 0xa, Frame: 0x8},
			`our kernel closed the connection during the handshake (code 0xa PROTOCOL_VIOLATION, frame type 0x8), not the peer: it found the peer's packets or transport parameters in error and sent the peer that CONNECTION_CLOSE`},
		{&LocalCloseError{Code: 0x8},
			`our kernel closed the connection during the handshake (code 0x8 TRANSPORT_PARAMETER_ERROR), not the peer: it found the peer's packets or transport parameters in error and sent the peer that CONNECTION_CLOSE`},
		{&LocalCloseError{},
			`our kernel ended the connection during the handshake, with no CONNECTION_CLOSE from the peer: its idle timer ran out, or the peer sent a stateless reset`},
		{&Error{Op: "read CRYPTO data", Err: ErrTimeout}, `QUIC handshake: read CRYPTO data: handshake did not complete in time`},
		{ErrNotSupported, `handshake: kernel QUIC is not supported here: unsupported operation`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%#v prints\n\t%s\nwant\n\t%s", c.err, got, c.want)
		}
	}
	if e := (&Error{Op: "x", Err: ErrTimeout}); !e.Timeout() || !errors.Is(e, ErrTimeout) {
		t.Errorf("%v: not a timeout matching ErrTimeout", e)
	}
}

package transport

import (
	"context"
	"fmt"
	"net/netip"
)

// Ngtcp2 is the name of Debian's ngtcp2 (a C QUIC stack on GnuTLS, its
// example programs gtlsclient and gtlsserver): a transport only the native
// driver measures (the ngtcp2(C) column), which kqbench's own cells do not
// take.
const Ngtcp2 = "ngtcp2"

func init() { nativeOnly[Ngtcp2] = ngtcp2{} }

type ngtcp2 struct{}

func (ngtcp2) Name() string { return Ngtcp2 }

func (ngtcp2) Available() error {
	return fmt.Errorf("ngtcp2 is Debian's C QUIC stack (gtlsclient, gtlsserver), which kqbench has no binding to: %w", ErrNativeOnly)
}

func (ngtcp2) Support(Options) (bool, string) {
	return false, "n/a: ngtcp2 is measured by the native driver only (ngtcp2(C))"
}

func (t ngtcp2) Listen(context.Context, netip.AddrPort, Options) (Listener, error) {
	return nil, t.Available()
}

func (t ngtcp2) Dial(context.Context, netip.AddrPort, Options) (Dialer, error) {
	return nil, t.Available()
}

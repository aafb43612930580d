//go:build !kquic || !linux

package http3_test

import (
	"net/http"
	"testing"

	"github.com/quic-go/quic-go"
	quichttp3 "github.com/quic-go/quic-go/http3"

	"kquic.dev/quicnet/http3"
)

// requireImpl skips nothing on the host: quic-go runs everywhere. In a
// guest it skips: the host runs these tests over quic-go, and the guest
// runs them over kernel QUIC (-tags kquic, make test-guest's second pass),
// which is what the guest is for. Benchmarks run in both.
func requireImpl(t testing.TB) {
	t.Helper()
	if _, bench := t.(*testing.B); bench {
		return // benchmarks compare with kernel QUIC in the guest
	}
	hostOnly(t, "over quic-go the host run covers it; the guest runs it over kernel QUIC (-tags kquic)")
}

// startQuicGoServerFor starts quic-go's http3 server on loopback, for this
// package's client.
func startQuicGoServerFor(t *testing.T, h http.Handler, opts ...func(*quichttp3.Server)) (string, *http3.Transport) {
	return startQuicGoServer(t, h, opts...), &http3.Transport{}
}

func quicGoConfig(testing.TB) *quic.Config { return nil }

// knownFailure: over quic-go there is none.
func knownFailure(*testing.T, error) {}

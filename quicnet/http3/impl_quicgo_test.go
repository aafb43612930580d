//go:build !kquic || !linux

package http3_test

import (
	"net/http"
	"testing"

	"github.com/quic-go/quic-go"

	"kquic.dev/quicnet/http3"
)

// requireImpl skips nothing: quic-go runs everywhere.
func requireImpl(testing.TB) {}

// startQuicGoServerFor starts quic-go's http3 server on loopback, for this
// package's client.
func startQuicGoServerFor(t *testing.T, h http.Handler) (string, *http3.Transport) {
	return startQuicGoServer(t, h), &http3.Transport{}
}

func quicGoConfig(testing.TB) *quic.Config { return nil }

// knownFailure: over quic-go there is none.
func knownFailure(*testing.T, error) {}

//go:build !linux

package http3_test

import (
	"testing"

	"kquic.dev/quicnet"
)

// hostOnly: off Linux there is no guest.
func hostOnly(testing.TB, string) {}

// requireKernel skips: kernel QUIC needs Linux.
func requireKernel(t testing.TB) {
	t.Helper()
	t.Skip(quicnet.Available(quicnet.Kernel))
}

// knownFailure: off Linux there is no kernel QUIC, and no module bug.
func knownFailure(*testing.T, error) {}

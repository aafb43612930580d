//go:build kquic && linux

package http3_test

import (
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// requireImpl skips (or fails, where $KQUIC_REQUIRE lists quic) without the
// kernel QUIC module.
func requireImpl(t testing.TB) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
}

package main

import (
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/quicnet"
)

// requireImpl skips (or fails, where $KQUIC_REQUIRE lists quic) where
// quicnet runs on kernel QUIC ($QUICNET_IMPLEMENTATION=kquic, or a -tags
// kquic build) and the module is not loaded.
func requireImpl(t testing.TB) {
	t.Helper()
	if quicnet.Implementation() == quicnet.Kernel {
		testenv.Require(t, kmod.FeatureQUIC)
	}
}

//go:build kquic && linux

package main

import (
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func requireImpl(t testing.TB) {
	t.Helper()
	testenv.Require(t, kmod.FeatureQUIC)
}

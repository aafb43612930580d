package http3_test

import (
	"testing"

	"kquic.dev/internal/testenv"
)

// hostOnly skips t inside a guest started by the harness.
func hostOnly(t testing.TB, why string) {
	t.Helper()
	testenv.HostOnly(t, why)
}

//go:build linux

package conformance

import (
	"testing"

	"kquic.dev/internal/testenv"
)

// hostOnly keeps a test that needs no kernel feature out of the guest pass
// (make test runs this package there for its kernel tests).
func hostOnly(t *testing.T) { testenv.HostOnly(t, "needs no kernel feature: the host pass runs it") }

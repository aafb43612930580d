//go:build !linux

package handshake_test

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"testing"

	"kquic.dev/handshake"
)

// TestNotSupportedOffLinux: off Linux Client, ClientEarly and Server fail
// with an error matching ErrNotSupported, and never call early.
func TestNotSupportedOffLinux(t *testing.T) {
	ctx := context.Background()
	cfg := &tls.Config{ServerName: "example.net"}
	f := os.Stdin
	if s, err := handshake.Client(ctx, f, cfg); s != nil || !errors.Is(err, handshake.ErrNotSupported) {
		t.Errorf("Client = %v, %v; want nil and an error matching ErrNotSupported", s, err)
	}
	early := func() error { t.Error("ClientEarly called early"); return nil }
	if s, err := handshake.ClientEarly(ctx, f, cfg, early); s != nil || !errors.Is(err, handshake.ErrNotSupported) {
		t.Errorf("ClientEarly = %v, %v; want nil and an error matching ErrNotSupported", s, err)
	}
	if s, err := handshake.Server(ctx, f, cfg); s != nil || !errors.Is(err, handshake.ErrNotSupported) {
		t.Errorf("Server = %v, %v; want nil and an error matching ErrNotSupported", s, err)
	}
}

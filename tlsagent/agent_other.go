//go:build !linux

package tlsagent

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"
)

// Agent serves the kernel's handshake requests; on this system there is no
// kernel to serve, and [Listen] fails with [ErrNotSupported].
type Agent struct {
	MaxInFlight    int
	DefaultTimeout time.Duration
}

// Listen fails: the handshake netlink family is Linux's.
func Listen(cfg *Config, log *slog.Logger) (*Agent, error) {
	return nil, fmt.Errorf("tlsagent: the kernel handshake family is Linux's, this is %s: %w", runtime.GOOS, ErrNotSupported)
}

// Serve fails with ErrNotSupported.
func (a *Agent) Serve(ctx context.Context) error { return ErrNotSupported }

// Close does nothing.
func (a *Agent) Close() error { return nil }

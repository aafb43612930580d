//go:build linux

package kquic_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"kquic.dev/kquic"
)

// errLog is a Config.Logger that keeps the errors a listener logs (failed
// handshakes, retried accepts), for tests to look at.
type errLog struct {
	mu   sync.Mutex
	msgs []string
	errs []error
}

func (l *errLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *errLog) WithGroup(string) slog.Handler            { return l }
func (l *errLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			if e, ok := a.Value.Any().(error); ok {
				l.errs = append(l.errs, e)
			} else {
				l.errs = append(l.errs, errors.New(a.Value.String()))
			}
		}
		return true
	})
	return nil
}

// Errors returns the errors logged so far.
func (l *errLog) Errors() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// listenerLogs maps a listener to its errLog (set up by logged).
var listenerLogs sync.Map

// logged gives cfg an errLog unless it has a logger.
func logged(cfg *kquic.Config) *errLog {
	if cfg.Logger != nil {
		return nil
	}
	l := &errLog{}
	cfg.Logger = slog.New(l)
	return l
}

// register remembers ln's errLog for hsErrors.
func register(ln *kquic.Listener, l *errLog) {
	if l != nil {
		listenerLogs.Store(ln, l)
	}
}

// hsErrors returns the errors ln logged: its failed handshakes.
func hsErrors(ln *kquic.Listener) []error {
	if l, ok := listenerLogs.Load(ln); ok {
		return l.(*errLog).Errors()
	}
	return nil
}

//go:build linux

package profile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/internal/kclock"
)

// Probe records one sample of the cell: a mode.Probe whose window is
// the sample's.
func (p *Profiler) Probe(c matrix.Cell) mode.Probe { return &profileProbe{p: p, key: c.Key()} }

// FileName is the name of a cell's folded stacks in the profile directory.
func FileName(c matrix.Cell) string {
	return strings.NewReplacer("/", "_", "=", "-").Replace(c.Key()) + ".folded"
}

// profileProbe enables perf record for one sample and notes its window.
type profileProbe struct {
	p          *Profiler
	key        string
	begin, end time.Time
	on         bool
}

// Start enables perf record's events.
func (r *profileProbe) Start(ctx context.Context) error {
	if r.p.cmd == nil {
		return errors.New("profile: perf record is not running")
	}
	if err := r.p.command("enable", 30*time.Second); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	r.on = true
	return nil
}

// Begin opens the window whose samples are kept.
func (r *profileProbe) Begin(at time.Time) { r.begin = at }

// End closes it.
func (r *profileProbe) End(at time.Time) { r.end = at }

// Stop disables perf record's events and keeps the window.
func (r *profileProbe) Stop() (map[string]float64, []string, error) {
	if !r.on {
		return nil, nil, nil
	}
	r.on = false
	err := r.p.command("disable", 30*time.Second)
	if !r.begin.IsZero() && !r.end.IsZero() {
		r.p.windows = append(r.p.windows, profileWindow{key: r.key, begin: monotonicSeconds(r.begin), end: monotonicSeconds(r.end)})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("profile: %w", err)
	}
	return nil, nil, nil
}

// monotonicSeconds is the time at on CLOCK_MONOTONIC, perf's clock here.
func monotonicSeconds(at time.Time) float64 {
	ns, _ := kclock.Monotonic(at)
	return float64(ns) / 1e9
}

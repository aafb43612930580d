//go:build linux

package capture

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Probe adapts a capture to the runner's probe hook (the same method set
// as counters.Probe): Start captures, Stop returns Stats.Flat().
type Probe struct {
	Opts Options
	c    *Capture
}

// Start starts a capture with p.Opts.
func (p *Probe) Start(ctx context.Context) error {
	if p.c != nil {
		return errors.New("capture: probe started twice without Stop")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := Start(p.Opts)
	if err != nil {
		return err
	}
	p.c = c
	return nil
}

// Begin opens the window the counts cover at the time at (Capture.Begin).
func (p *Probe) Begin(at time.Time) {
	if p.c != nil {
		p.c.Begin(at)
	}
}

// End closes the window at the time at (Capture.End).
func (p *Probe) End(at time.Time) {
	if p.c != nil {
		p.c.End(at)
	}
}

// Stop stops the capture and returns its counts; missing lists the
// capture's kernel drops, if any, as a caveat.
func (p *Probe) Stop() (map[string]float64, []string, error) {
	if p.c == nil {
		return nil, nil, errors.New("capture: probe stopped without Start")
	}
	c := p.c
	p.c = nil
	st, err := c.Stop()
	var missing []string
	if st.KernelDrops > 0 || st.Unread {
		missing = append(missing, "wire: the capture could not keep up (packets dropped or left unread); counts are low")
	}
	if st.LateBegin > 0 {
		missing = append(missing, fmt.Sprintf("wire: the window was set to open %v after it did (this process was not run in time): counts may be low", st.LateBegin.Round(time.Millisecond)))
	}
	return st.Flat(), missing, err
}

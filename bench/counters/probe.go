//go:build linux

package counters

import (
	"context"
	"errors"
	"time"
)

// Probe is the hook a benchmark runner calls around one measured sample.
// Stop returns the counter values by name, the counters that are missing
// with the reason ("syscalls: no process to count"), and an error only
// when something failed that the caller should report (missing counters
// are not errors).
type Probe interface {
	Start(ctx context.Context) error
	Stop() (values map[string]float64, missing []string, err error)
}

// NewProbe returns a Probe that runs a counter Set with opts per sample.
func NewProbe(opts Options) Probe { return &setProbe{opts: opts} }

type setProbe struct {
	opts Options
	set  *Set
}

func (p *setProbe) Start(ctx context.Context) error {
	if p.set != nil {
		return errors.New("counters: probe started twice without Stop")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := Start(p.opts)
	if err != nil {
		return err
	}
	p.set = s
	return nil
}

// Begin opens the window the counts cover at the time at (Set.Begin).
func (p *setProbe) Begin(at time.Time) {
	if p.set != nil {
		p.set.Begin(at)
	}
}

// End closes it at the time at (Set.End).
func (p *setProbe) End(at time.Time) {
	if p.set != nil {
		p.set.End(at)
	}
}

func (p *setProbe) Stop() (map[string]float64, []string, error) {
	if p.set == nil {
		return nil, nil, errors.New("counters: probe stopped without Start")
	}
	s := p.set
	p.set = nil
	r, err := s.Stop()
	return r.Flat(), r.MissingList(), err
}

// PerMBMap divides each value by the megabytes (1e6 bytes) of payload
// delivered; see PerMB. With bytesDelivered 0 it returns nil.
func PerMBMap(values map[string]float64, bytesDelivered int64) map[string]float64 {
	if bytesDelivered <= 0 {
		return nil
	}
	mb := float64(bytesDelivered) / 1e6
	out := make(map[string]float64, len(values))
	for k, v := range values {
		out[k] = v / mb
	}
	return out
}

//go:build linux

package bench

import (
	"errors"
	"fmt"

	"kquic.dev/bench/topo"
)

// applyNetem puts the spec's impairment on the topology and says what it
// did in the log.
func (r *Runner) applyNetem(t *topo.Topology) error {
	n := r.Spec.Impairment()
	if n.IsZero() {
		return nil
	}
	if err := t.SetNetem(n); err != nil {
		return fmt.Errorf("matrix: %w", err)
	}
	q, _ := t.ClientDevice().Netem()
	fmt.Fprintf(r.Log, "impairment: %s; on each end of the veth pair: %s\n", n.Title(), q)
	return nil
}

// singleHostOnly refuses, in two-host mode, what needs the single-host
// topology.
func (r *Runner) singleHostOnly() error {
	if r.Spec.Netem != "" {
		return errors.New("matrix: --netem needs the single-host topology (two-host mode does not impair the NICs' link)")
	}
	return nil
}

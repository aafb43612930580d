//go:build linux

package bench

import (
	"fmt"
	"io"
)

// MaxSteal is the time the hypervisor may run something else on this
// machine's CPUs during a sample (steal, in cores: 0.05 is 5% of one CPU,
// summed over both ends' hosts) before the sample is set aside as a
// measurement of the host's other tenants rather than of the transports,
// and taken again once. On a shared VM a rise of steal is what a run whose
// figures fall by a fifth from one minute to the next shows.
const MaxSteal = 0.05

// steal returns the sample's steal in cores over both hosts.
func (s *Sample) steal() float64 {
	v := s.CPU.StealCores
	if s.ServerCPU != nil {
		v += s.ServerCPU.StealCores
	}
	return v
}

// disturbed reports whether the hypervisor took more than MaxSteal during
// the sample.
func (s *Sample) disturbed() bool { return s.steal() > MaxSteal }

// writeStealNote says under the tables how many samples were set aside for
// steal, and how many kept still had it.
func writeStealNote(w io.Writer, d *Document) {
	aside, kept, total := 0, 0, 0
	worst := 0.0
	for _, c := range d.Cells {
		aside += len(c.Disturbed)
		for _, s := range c.Disturbed {
			worst = max(worst, s.steal())
		}
		for _, s := range c.Samples {
			total++
			if s.disturbed() {
				kept++
				worst = max(worst, s.steal())
			}
		}
	}
	if aside == 0 && kept == 0 {
		return
	}
	fmt.Fprintf(w, "steal the hypervisor ran something else on this machine's CPUs (up to %.0f%% of a CPU) during %d samples (%d set aside and taken again, \"disturbed\" in the results; %d of the %d kept still over %.0f%%): the machine was not quiet, and its figures may move between runs\n",
		worst*100, aside+kept, aside, kept, total, MaxSteal*100)
}

package render

import (
	"fmt"
	"io"

	"kquic.dev/bench/results"
)

// writeStealNote says under the tables how many samples were set aside for
// steal, and how many kept still had it.
func writeStealNote(w io.Writer, d *results.Document) {
	aside, kept, total := 0, 0, 0
	worst := 0.0
	for _, c := range d.Cells {
		aside += len(c.Disturbed)
		for _, s := range c.Disturbed {
			worst = max(worst, s.Steal())
		}
		for _, s := range c.Samples {
			total++
			if s.Disturbed() {
				kept++
				worst = max(worst, s.Steal())
			}
		}
	}
	if aside == 0 && kept == 0 {
		return
	}
	fmt.Fprintf(w, "steal the hypervisor ran something else on this machine's CPUs (up to %.0f%% of a CPU) during %d samples (%d set aside and taken again, \"disturbed\" in the results; %d of the %d kept still over %.0f%%): the machine was not quiet, and its figures may move between runs\n",
		worst*100, aside+kept, aside, kept, total, results.MaxSteal*100)
}

// writeCPUNote says under the tables how many samples have no CPU figures,
// and why the first of them has none (Sample.CPUUnavailable).
func writeCPUNote(w io.Writer, d *results.Document) {
	n, total, why := 0, 0, ""
	for _, c := range d.Cells {
		for _, s := range c.Samples {
			total++
			if s.CPUUnavailable != "" {
				if n++; why == "" {
					why = s.CPUUnavailable
				}
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "cpu   %d of the %d samples have no CPU figures (their CPU columns read 0): %s\n", n, total, why)
	}
}

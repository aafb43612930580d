package matrix

import "time"

// SampleOverhead is what a sample costs beyond its warm-up and measured
// time, as a plan counts it: the server's listen, the dial and handshake,
// the probes' window lead, the teardown, and the results file's write;
// a few hundred milliseconds on hardware, more in an emulated guest.
const SampleOverhead = 2 * time.Second

// ConfigOverhead is what each device configuration (MTU, GSO) costs to
// set up: the veth pair's MTU and offloads, checked.
const ConfigOverhead = 5 * time.Second

// Plan is the longest a run of the spec should take: every cell's
// MaxSamples samples (the extra rounds of wide cells included), each of
// Warmup + Time + SampleOverhead, a quarter more for samples the
// hypervisor's steal makes the run take again, and ConfigOverhead per
// device configuration. A guest running the matrix (kqbench matrix --vm)
// is given this plus its boot.
func (s *Spec) Plan() time.Duration {
	cells := s.Cells()
	per := s.Warmup + s.Time + SampleOverhead
	d := time.Duration(len(cells)*s.MaxSamples()) * per
	d += d / 4
	configs := 0
	for i, c := range cells {
		if i == 0 || c.MTU != cells[i-1].MTU || c.GSO != cells[i-1].GSO {
			configs++
		}
	}
	return d + time.Duration(configs)*ConfigOverhead
}

// WindowLead is how far ahead of time a sample's window instants are given
// to the probes: setting them takes a few milliseconds, more under
// emulation when the traffic holds both CPUs. A handshake-mode sample must
// be longer.
const WindowLead = 100 * time.Millisecond

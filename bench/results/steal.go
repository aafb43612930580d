package results

// MaxSteal is the time the hypervisor may run something else on this
// machine's CPUs during a sample (steal, in cores: 0.05 is 5% of one CPU,
// summed over both ends' hosts) before the sample is set aside as a
// measurement of the host's other tenants rather than of the transports,
// and taken again once. On a shared VM a rise of steal is what a run whose
// figures fall by a fifth from one minute to the next shows.
const MaxSteal = 0.05

// Steal returns the sample's steal in cores over both hosts.
func (s *Sample) Steal() float64 {
	v := s.CPU.StealCores
	if s.ServerCPU != nil {
		v += s.ServerCPU.StealCores
	}
	return v
}

// Disturbed reports whether the hypervisor took more than MaxSteal during
// the sample.
func (s *Sample) Disturbed() bool { return s.Steal() > MaxSteal }

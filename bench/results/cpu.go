package results

// CPU is the processor time used during a sample, in CPU-seconds per second
// of wall time ("cores"): the whole machine's, split by kind, from
// /proc/stat (both ends run on it in single-host mode; in two-host mode
// Sample.CPU is the client host's and Sample.ServerCPU the server's), and
// the kqbench process's own, from getrusage.
//
// BusyCores is the CPUs' time not idle, waiting for I/O or stolen: wall
// time times the online CPUs less the idle time, which the kernel measures
// from the idle loop's clock. The split by kind (user, system, softirq)
// comes from the kernel's ticks, which fall behind the clock where timer
// interrupts are late (an emulated CPU lost half of them under load), so
// the split is scaled to BusyCores; the process's time is the scheduler's
// own clock.
type CPU struct {
	BusyCores    float64 `json:"busy_cores"`
	UserCores    float64 `json:"user_cores"`
	SystemCores  float64 `json:"system_cores"`
	SoftirqCores float64 `json:"softirq_cores"`
	// StealCores is time the hypervisor ran something else while this
	// machine had work (a VM's vCPU waiting for a host CPU); not in BusyCores.
	StealCores   float64 `json:"steal_cores,omitempty"`
	ProcessCores float64 `json:"process_cores"`
	// CyclesPerByte and InstructionsPerByte are filled where hardware
	// counters exist.
	CyclesPerByte       float64 `json:"cycles_per_byte,omitempty"`
	InstructionsPerByte float64 `json:"instructions_per_byte,omitempty"`
}

// EndsCPU is the time of the CPUs a sample's two ends were pinned to.
type EndsCPU struct {
	Client PinnedCPU  `json:"client"`
	Server *PinnedCPU `json:"server,omitempty"`
}

// PinnedCPU is one CPU's time over a sample, as a fraction of the wall
// time: busy (the clock's: not idle, iowait or stolen) and the part of it
// the ticks saw in softirq (scaled as CPU's split is).
type PinnedCPU struct {
	CPU     int     `json:"cpu"`
	Busy    float64 `json:"busy"`
	Softirq float64 `json:"softirq"`
	// CyclesPerByte and InstructionsPerByte are this CPU's, where the
	// machine has hardware counters.
	CyclesPerByte       float64 `json:"cycles_per_byte,omitempty"`
	InstructionsPerByte float64 `json:"instructions_per_byte,omitempty"`
}

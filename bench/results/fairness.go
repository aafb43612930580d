package results

// JainIndex is Jain's fairness index of the shares x (the connections'
// goodputs): (Σx)² / (n·Σx²), 1 when every share is equal, 1/n when one
// takes everything; 0 for no shares or none above zero.
func JainIndex(x []float64) float64 {
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	if len(x) == 0 || sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(x)) * sq)
}

// CoreCPU is one CPU's time over a sample, each part a fraction of the
// wall time: busy (the clock's: not idle, iowait or stolen) and its split
// by the kernel's ticks into user (with nice), system, and softirq (the
// split scaled to Busy, as CPU's is; hardware interrupts are the rest).
type CoreCPU struct {
	CPU     int     `json:"cpu"`
	Busy    float64 `json:"busy"`
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	Softirq float64 `json:"softirq"`
}

package matrix

import "fmt"

// Affinity pins the two ends of every sample to CPUs, as iperf3's -A does:
// the goroutine that writes and the one that reads each stream run on a
// thread bound to its end's CPU, so the two ends do not share a CPU and
// each CPU's time (and the softirq work the kernel does there) belongs to
// one end. The transports' own threads (quic-go's loops, the Go runtime's)
// and the kernel's work elsewhere are not pinned. A mode whose servers'
// goroutines cannot be pinned one by one may pin its ends otherwise (its
// ModeSpec.Notes say how).
//
// In two-host mode only the client's CPU applies (on this host).
type Affinity struct {
	Client int `json:"client_cpu"`
	Server int `json:"server_cpu"`
}

// ClientCPU is the client end's CPU, -1 when not pinned.
func (a *Affinity) ClientCPU() int {
	if a == nil {
		return -1
	}
	return a.Client
}

// ServerCPU is the server end's CPU, -1 when not pinned.
func (a *Affinity) ServerCPU() int {
	if a == nil {
		return -1
	}
	return a.Server
}

// String is "client CPU 0, server CPU 1", or "not pinned".
func (a *Affinity) String() string {
	if a == nil {
		return "not pinned"
	}
	return fmt.Sprintf("client CPU %d, server CPU %d", a.Client, a.Server)
}

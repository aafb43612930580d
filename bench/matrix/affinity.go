package matrix

import (
	"fmt"
	"strconv"
	"strings"
)

// Affinity pins the two ends of every sample to CPUs, as iperf3's -A does:
// the goroutine that writes and the one that reads each stream run on a
// thread bound to its end's CPU, so the two ends do not share a CPU and
// each CPU's time (and the softirq work the kernel does there) belongs to
// one end. The transports' own threads (quic-go's loops, the Go runtime's)
// and the kernel's work elsewhere are not pinned. A mode whose servers'
// goroutines cannot be pinned one by one may pin its ends otherwise (its
// ModeSpec.Notes say how).
//
// A cell of several connections (Cell.Conns) pins each connection's two
// ends to CPUs of their own where there are enough (ForConns).
//
// In two-host mode only the client's CPU applies (on this host).
type Affinity struct {
	Client int `json:"client_cpu"`
	Server int `json:"server_cpu"`
	// Pairs are the CPU pairs of --affinity C,S/C,S/...: connection i of a
	// cell runs on Pairs[i] (Client and Server are the first pair's);
	// empty for one pair, which every connection shares, as iperf3 -A with
	// -P does.
	Pairs []CPUPair `json:"pairs,omitempty"`
	// Usable are the CPUs --affinity auto may pin to (this process's, or
	// the guest's for a run in a guest), from which the connections of a
	// cell with several get theirs; empty for pairs given by number.
	Usable []int `json:"usable_cpus,omitempty"`
}

// CPUPair is the client's and the server's CPU of one connection.
type CPUPair struct {
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
	if len(a.Pairs) > 1 {
		var ps []string
		for _, p := range a.Pairs {
			ps = append(ps, fmt.Sprintf("%d,%d", p.Client, p.Server))
		}
		return "client,server CPUs per connection " + strings.Join(ps, " ")
	}
	return fmt.Sprintf("client CPU %d, server CPU %d", a.Client, a.Server)
}

// ForConns is where the n connections of a cell run: connection i's two
// ends on the i-th pair (nil: not pinned). With --affinity auto each
// connection gets a client and a server CPU of its own where 2n CPUs are
// usable (the clients on the first n, the servers on the next n), and
// shares one CPU between its two ends where n are; pairs given by number
// must number n or more, or be one pair that every connection shares. A
// count the CPUs cannot pin is an error that says what to do.
func (a *Affinity) ForConns(n int) ([]CPUPair, error) {
	if a == nil || n < 1 {
		return nil, nil
	}
	if n == 1 {
		return []CPUPair{{a.Client, a.Server}}, nil
	}
	out := make([]CPUPair, n)
	switch u := a.Usable; {
	case len(u) >= 2*n:
		for i := range out {
			out[i] = CPUPair{u[i], u[n+i]}
		}
	case len(u) >= n:
		for i := range out {
			out[i] = CPUPair{u[i], u[i]}
		}
	case len(u) > 0:
		return nil, fmt.Errorf("--conns %d with --affinity auto: %d connections need %d CPUs to pin (one each, its two ends sharing it; %d to keep the ends apart), and %d are usable (%s): leave out the counts over %d, or run unpinned with --affinity none",
			n, n, n, 2*n, len(u), cpuList(u), len(u))
	case len(a.Pairs) >= n:
		copy(out, a.Pairs[:n])
	case len(a.Pairs) > 1:
		return nil, fmt.Errorf("--conns %d: --affinity gives %d CPU pairs (%s) for %d connections: give a pair per connection (CLIENT,SERVER/CLIENT,SERVER/...), one pair for all, or --affinity none",
			n, len(a.Pairs), a, n)
	default:
		for i := range out {
			out[i] = CPUPair{a.Client, a.Server}
		}
	}
	return out, nil
}

// cpuList is "0 1 2".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, " ")
}

// AutoAffinity is --affinity auto on a machine whose usable CPUs are
// cpus: one connection on the first two, several as ForConns says; nil
// (not pinned) with fewer than two.
func AutoAffinity(cpus []int) *Affinity {
	if len(cpus) < 2 {
		return nil // one CPU: nothing to separate
	}
	return &Affinity{Client: cpus[0], Server: cpus[1], Usable: cpus}
}

package perftest

import (
	"fmt"
	"io"
	"time"
)

// Cost is what one end of a run used: CPU time (user and system, every
// thread) and how often its threads stopped running, voluntarily (to wait:
// a sleep, a futex, a poll) or not (preempted, often by a thread woken on
// its CPU). The C tools run one thread that waits in the kernel; a Go
// program adds the runtime's threads (sysmon, idle Ms woken by the poller
// or to take over a P), and these columns show what that costs.
type Cost struct {
	CPU         time.Duration
	Voluntary   int64
	Involuntary int64
}

// sub is c minus an earlier reading d.
func (c Cost) sub(d Cost) Cost {
	return Cost{CPU: c.CPU - d.CPU, Voluntary: c.Voluntary - d.Voluntary, Involuntary: c.Involuntary - d.Involuntary}
}

// RunCost is the cost of one client run: the client process's whole life
// (start-up and handshake included) and the server's during it.
type RunCost struct {
	Client, Server Cost
	// ServerOK is false where the server's counters could not be read.
	ServerOK bool
}

// perMiB is a cost per MiB of total bytes: CPU milliseconds and context
// switches.
type perMiB struct{ cpuMs, vol, invol float64 }

func costPerMiB(c Cost, total int64) perMiB {
	mib := float64(total) / (1 << 20)
	return perMiB{cpuMs: float64(c.CPU) / float64(time.Millisecond) / mib, vol: float64(c.Voluntary) / mib, invol: float64(c.Involuntary) / mib}
}

// medianPerMiB is the median, field by field, of the runs' costs per MiB.
func medianPerMiB(cs []Cost, total int64) perMiB {
	var cpu, vol, invol []float64
	for _, c := range cs {
		p := costPerMiB(c, total)
		cpu, vol, invol = append(cpu, p.cpuMs), append(vol, p.vol), append(invol, p.invol)
	}
	return perMiB{cpuMs: Summarize(cpu).Median, vol: Summarize(vol).Median, invol: Summarize(invol).Median}
}

func (p perMiB) String() string {
	return fmt.Sprintf("%.0fms %.0fv %.0fi", p.cpuMs, p.vol, p.invol)
}

// WriteCosts prints, per message size and pairing, the median cost per MiB
// sent of the client and of the server: CPU milliseconds, voluntary (v) and
// involuntary (i) context switches. It prints nothing if no run recorded
// costs.
func (r *CompareResult) WriteCosts(w io.Writer) {
	if len(r.Costs) == 0 {
		return
	}
	fmt.Fprintf(w, "why: per MiB sent, medians of the runs: CPU ms, voluntary (v) and involuntary (i) context switches;\n"+
		"client: its whole process (start-up and handshake included), server: during the run\n")
	fmt.Fprintf(w, "%-9s", "msg")
	for _, p := range Pairings {
		fmt.Fprintf(w, " | %-34s", p)
	}
	fmt.Fprintln(w)
	for _, size := range r.Options.Sizes {
		fmt.Fprintf(w, "%-9s", sizeName(size))
		for _, p := range Pairings {
			runs := r.Costs[size][p]
			if len(runs) == 0 {
				fmt.Fprintf(w, " | %-34s", "n/a")
				continue
			}
			var cli, srv []Cost
			for _, rc := range runs {
				cli = append(cli, rc.Client)
				if rc.ServerOK {
					srv = append(srv, rc.Server)
				}
			}
			cell := "cli " + medianPerMiB(cli, r.Options.Total).String()
			if len(srv) > 0 {
				cell += ", srv " + medianPerMiB(srv, r.Options.Total).String()
			}
			fmt.Fprintf(w, " | %-34s", cell)
		}
		fmt.Fprintln(w)
	}
}

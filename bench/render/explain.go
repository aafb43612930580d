package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// ioSyscalls are the system calls that move a transport's data; the rest
// of a process's (futex, epoll_pwait, nanosleep, ...) are its runtime's.
var ioSyscalls = map[string]bool{
	"read": true, "write": true, "readv": true, "writev": true, "sendto": true, "recvfrom": true,
	"sendmsg": true, "recvmsg": true, "sendmmsg": true, "recvmmsg": true, "sendfile": true, "splice": true,
}

// WriteExplain prints, for every measured cell with counters (--explain),
// what each delivered megabyte cost: packets the sender's device sent,
// packets the receiver's stack took in, the syscalls of this process (both
// ends in single-host mode, this host's in two-host mode) split into those
// that move data (sendmsg, recvmsg, read, write, sendfile, ...) and the
// others (the Go runtime's futex, epoll_pwait, nanosleep), drops, and
// CPU cycles per byte where the machine counts them; and the ratio of each
// transport's packets and syscalls to the first transport of the same
// message size, MTU, GSO and encryption, in the spirit of Table 3 of "QUIC is
// not Quick Enough over Fast Internet" (WWW 2024).
//
// A mode with an explanation of its own (View.Explain) prints that
// instead.
func WriteExplain(w io.Writer, d *results.Document) error {
	if v := viewOf(d); v.Explain != nil {
		return v.Explain(w, d)
	}
	return WriteCountersExplain(w, d)
}

// WriteCountersExplain is the goodput view's explanation (WriteExplain's
// without a mode's own): the counters per MB delivered and the brakes,
// for a mode's explanation to add to.
func WriteCountersExplain(w io.Writer, d *results.Document) error {
	var rows []explainRow
	missing := map[string]bool{}
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		if p, ok := CellPerMB(c, missing); ok {
			rows = append(rows, explainRow{c: c, PerMB: p})
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no counters in these results: run the matrix with --explain")
		return writeBrakes(w, d)
	}
	if err := writeExplainRows(w, d, rows); err != nil {
		return err
	}
	var ms []string
	for m := range missing {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	for _, m := range ms {
		fmt.Fprintln(w, "missing: "+m)
	}
	return writeBrakes(w, d)
}

// An explainRow is one cell's costs per MB delivered, means over its
// samples.
type explainRow struct {
	c results.CellResult
	PerMB
}

// PerMB is what a measured cell's delivered megabyte cost, means over its
// samples with counters (--explain): the packets the sender's device sent
// and the receiver's stack took in, the syscalls of this process (IOSys of
// them those that move data), drops, the wire's packets, CPU cycles per
// byte and the pinned ends' CPU time.
type PerMB struct {
	TxPkts, RxPkts, Sys, IOSys, Drops float64
	WirePkts, AckOnly, CyclesPB       float64
	// CPU time per MB of the pinned client's and server's CPUs.
	ClientMs, ServerMs float64
	// Drops per MB by where they happened, "server NOT_SPECIFIED@quic_frame_put".
	DropsAt map[string]float64
	// Which of the optional figures the samples have.
	HasWire, HasCycles, HasEnds, HasServer, HasSys bool
}

// CellPerMB is a measured cell's costs per MB, false when no sample
// counted; the counters its samples miss are added to missing.
func CellPerMB(c results.CellResult, missing map[string]bool) (PerMB, bool) {
	sender, receiver := "client", "server"
	if c.Direction == "down" {
		sender, receiver = "server", "client"
	}
	r := PerMB{DropsAt: map[string]float64{}}
	n := 0
	for _, s := range c.Samples {
		for _, m := range s.CountersMissing {
			missing[m] = true
		}
		if s.Counters == nil || s.Bytes == 0 {
			continue
		}
		mb := float64(s.Bytes) / 1e6
		v := s.Counters
		r.TxPkts += v[sender+".tx_packets"] / mb
		r.RxPkts += v[receiver+".rx_packets"] / mb
		for _, k := range []string{"client.syscalls", "server.syscalls", "process.syscalls", "server_process.syscalls"} {
			_, has := v[k]
			r.HasSys = r.HasSys || has
		}
		r.Sys += (v["client.syscalls"] + v["server.syscalls"] + v["process.syscalls"] + v["server_process.syscalls"]) / mb
		r.Drops += (v["client.drops"] + v["server.drops"]) / mb
		for k, x := range v {
			if IOSyscall(k) {
				r.IOSys += x / mb
			}
			if end, what, ok := strings.Cut(k, ".drop."); ok && strings.Contains(what, "@") && x > 0 {
				r.DropsAt[end+" "+what] += x / mb
			}
		}
		if p, ok := v["wire.tx_packets"]; ok {
			r.HasWire = true
			r.WirePkts += (p + v["wire.rx_packets"]) / mb
			r.AckOnly += (v["wire.tx_tcp_ack_only"] + v["wire.rx_tcp_ack_only"]) / mb
		}
		if s.CPU.CyclesPerByte > 0 {
			r.HasCycles = true
			r.CyclesPB += s.CPU.CyclesPerByte
		}
		if e := s.Ends; e != nil {
			r.HasEnds = true
			r.ClientMs += e.Client.Busy * s.Seconds * 1e3 / mb
			if e.Server != nil {
				r.HasServer = true
				r.ServerMs += e.Server.Busy * s.Seconds * 1e3 / mb
			}
		}
		n++
	}
	if n == 0 {
		return PerMB{}, false
	}
	f := float64(n)
	r.TxPkts, r.RxPkts, r.Sys, r.Drops, r.IOSys = r.TxPkts/f, r.RxPkts/f, r.Sys/f, r.Drops/f, r.IOSys/f
	r.WirePkts, r.AckOnly, r.CyclesPB = r.WirePkts/f, r.AckOnly/f, r.CyclesPB/f
	r.ClientMs, r.ServerMs = r.ClientMs/f, r.ServerMs/f
	for k := range r.DropsAt {
		r.DropsAt[k] /= f
	}
	return r, true
}

// writeExplainRows prints the rows grouped by size, MTU, GSO, encryption,
// direction and streams, each group's transports in the spec's order with
// their ratios to the group's first.
func writeExplainRows(w io.Writer, d *results.Document, rows []explainRow) error {
	order := map[string]int{}
	for i, t := range d.Spec.Transports {
		order[t] = i
	}
	group := func(c results.CellResult) string {
		return fmt.Sprintf("%s/%d/%d/%v/%v/%d/%s", c.Direction, c.Size, c.MTU, c.GSO, c.Crypto, c.Streams, c.CC)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].c, rows[j].c
		if ga, gb := group(a), group(b); ga != gb {
			return LessCell(a, b)
		}
		return order[a.Transport] < order[b.Transport]
	})
	fmt.Fprintln(w, "Per MB delivered (means over the samples); ratios against the first transport of each group")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transport\tsize\tMTU\tGSO\tcrypto\tdir\tMbit/s\tsender pkts/MB\treceiver pkts/MB\tI/O syscalls/MB\tother syscalls/MB\tdrops/MB\twire pkts/MB\tTCP ACK-only/MB\tcycles/B\tclient CPU ms/MB\tserver CPU ms/MB\tpkts ×\tI/O syscalls ×\t")
	var base *explainRow
	for i := range rows {
		r := &rows[i]
		if i == 0 || group(rows[i-1].c) != group(r.c) {
			base = r
		}
		opt := func(ok bool, v float64, prec int) string {
			if !ok {
				return "-"
			}
			return fmt.Sprintf("%.*f", prec, v)
		}
		ratio := func(a, b float64) string {
			if b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", a/b)
		}
		// The native driver's tools are other processes: no syscalls.
		sysOK := r.c.Driver == ""
		ioRatio := ratio(r.IOSys, base.IOSys)
		if !sysOK {
			ioRatio = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.c.ColumnName(), SizeName(r.c.Size), r.c.MTU, matrix.OnOff(r.c.GSO), matrix.OnOff(r.c.Crypto), r.c.Direction, r.c.MedianBps/1e6,
			r.TxPkts, r.RxPkts, opt(sysOK, r.IOSys, 0), opt(sysOK, r.Sys-r.IOSys, 0), r.Drops,
			opt(r.HasWire, r.WirePkts, 0), opt(r.HasWire, r.AckOnly, 0), opt(r.HasCycles, r.CyclesPB, 1),
			opt(r.HasEnds, r.ClientMs, 1), opt(r.HasServer, r.ServerMs, 1),
			ratio(r.TxPkts, base.TxPkts), ioRatio)
	}
	return tw.Flush()
}

// LessCell orders cells for the explain tables: direction, crypto, MTU, GSO,
// size, streams, congestion control, netem profile.
func LessCell(a, b results.CellResult) bool {
	switch {
	case a.Direction != b.Direction:
		return a.Direction < b.Direction
	case a.Crypto != b.Crypto:
		return a.Crypto
	case a.MTU != b.MTU:
		return a.MTU < b.MTU
	case a.GSO != b.GSO:
		return a.GSO
	case a.Size != b.Size:
		return a.Size < b.Size
	case a.Streams != b.Streams:
		return a.Streams < b.Streams
	case a.CC != b.CC:
		return a.CC < b.CC
	}
	return a.Netem < b.Netem
}

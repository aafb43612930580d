package report

import (
	"fmt"
	"sort"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// ExplainTable is the --explain counters per MB delivered as the page
// draws them: the figures `kqbench report --explain` prints, a group of
// rows per cell setting (direction, size, MTU, GSO, encryption) with a row
// per transport, and only the columns some row has a value in.
type ExplainTable struct {
	Columns []ExplainColumn
	Groups  []ExplainGroup
	// Missing are the counters the run could not count, with the reason.
	Missing []string
}

// ExplainColumn is a column's heading: what it counts and its unit.
type ExplainColumn struct {
	Name, Unit string
	// Text marks a column of words (the places drops happened).
	Text bool
}

// ExplainGroup is the rows of one cell setting.
type ExplainGroup struct {
	Label string
	Rows  []ExplainRow
}

// ExplainRow is one transport's values, one per column ("-" for none).
type ExplainRow struct {
	Column string
	Key    string
	Values []string
}

// ioSyscalls are the system calls that move a transport's data, as in
// `kqbench report --explain`; the rest of a process's are its runtime's.
var ioSyscalls = map[string]bool{
	"read": true, "write": true, "readv": true, "writev": true, "sendto": true, "recvfrom": true,
	"sendmsg": true, "recvmsg": true, "sendmmsg": true, "recvmmsg": true, "sendfile": true, "splice": true,
}

// explainRow is one cell's means per MB over its samples, as
// render.WriteExplain computes them.
type explainRow struct {
	c                                              results.CellResult
	txPkts, rxPkts, sys, ioSys, drops              float64
	wirePkts, ackOnly, cyclesPB                    float64
	clientMs, serverMs                             float64
	hasWire, hasCycles, hasEnds, hasServer, hasSys bool
	dropsAt                                        map[string]float64 // "server NOT_SPECIFIED@quic_frame_put"
}

// explainTable lays out the counters of a bulk-mode document (nil when it
// has none, or is of another mode: its text is shown instead).
func explainTable(d *results.Document) *ExplainTable {
	if d.Spec.Mode != "" && d.Spec.Mode != matrix.ModeBulk {
		return nil
	}
	var rows []explainRow
	missing := map[string]bool{}
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		snd, rcv := "client", "server"
		if c.Direction == "down" {
			snd, rcv = rcv, snd
		}
		r := explainRow{c: c, dropsAt: map[string]float64{}}
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
			r.txPkts += v[snd+".tx_packets"] / mb
			r.rxPkts += v[rcv+".rx_packets"] / mb
			for _, k := range []string{"client.syscalls", "server.syscalls", "process.syscalls", "server_process.syscalls"} {
				_, has := v[k]
				r.hasSys = r.hasSys || has
			}
			r.sys += (v["client.syscalls"] + v["server.syscalls"] + v["process.syscalls"] + v["server_process.syscalls"]) / mb
			r.drops += (v["client.drops"] + v["server.drops"]) / mb
			for k, x := range v {
				if i := strings.LastIndex(k, ".syscall."); i >= 0 && ioSyscalls[k[i+len(".syscall."):]] {
					r.ioSys += x / mb
				}
				if end, what, ok := strings.Cut(k, ".drop."); ok && strings.Contains(what, "@") && x > 0 {
					r.dropsAt[end+" "+what] += x / mb
				}
			}
			if p, ok := v["wire.tx_packets"]; ok {
				r.hasWire = true
				r.wirePkts += (p + v["wire.rx_packets"]) / mb
				r.ackOnly += (v["wire.tx_tcp_ack_only"] + v["wire.rx_tcp_ack_only"]) / mb
			}
			if s.CPU.CyclesPerByte > 0 {
				r.hasCycles = true
				r.cyclesPB += s.CPU.CyclesPerByte
			}
			if e := s.Ends; e != nil {
				r.hasEnds = true
				r.clientMs += e.Client.Busy * s.Seconds * 1e3 / mb
				if e.Server != nil {
					r.hasServer = true
					r.serverMs += e.Server.Busy * s.Seconds * 1e3 / mb
				}
			}
			n++
		}
		if n == 0 {
			continue
		}
		f := float64(n)
		r.txPkts, r.rxPkts, r.sys, r.ioSys, r.drops = r.txPkts/f, r.rxPkts/f, r.sys/f, r.ioSys/f, r.drops/f
		r.wirePkts, r.ackOnly, r.cyclesPB, r.clientMs, r.serverMs = r.wirePkts/f, r.ackOnly/f, r.cyclesPB/f, r.clientMs/f, r.serverMs/f
		for k := range r.dropsAt {
			r.dropsAt[k] /= f
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil
	}
	group := func(c results.CellResult) string {
		return fmt.Sprintf("%s/%d/%d/%v/%v/%d/%s/%s", c.Direction, c.Size, c.MTU, c.GSO, c.Crypto, c.Streams, c.CC, c.Netem)
	}
	order := map[string]int{}
	for i, t := range d.Spec.Transports {
		order[t] = i
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i].c, rows[j].c
		if ga, gb := group(a), group(b); ga != gb {
			return lessCell(a, b)
		}
		if a.Transport != b.Transport {
			return order[a.Transport] < order[b.Transport]
		}
		return a.Driver < b.Driver
	})

	type col struct {
		ExplainColumn
		value func(r, base *explainRow) (string, bool) // false: no value
	}
	num := func(prec int, f func(r *explainRow) (float64, bool)) func(r, base *explainRow) (string, bool) {
		return func(r, _ *explainRow) (string, bool) {
			v, ok := f(r)
			if !ok {
				return "-", false
			}
			return fmt.Sprintf("%.*f", prec, v), true
		}
	}
	ratio := func(f func(r *explainRow) float64, own bool) func(r, base *explainRow) (string, bool) {
		return func(r, base *explainRow) (string, bool) {
			if own && (r.c.Driver != "" || !r.hasSys) || f(base) == 0 {
				return "-", false
			}
			return fmt.Sprintf("%.2f", f(r)/f(base)), true
		}
	}
	// The native driver's tools are other processes: no syscalls of theirs.
	own := func(r *explainRow) bool { return r.c.Driver == "" && r.hasSys }
	cols := []col{
		{ExplainColumn{"goodput", "Mbit/s", false}, num(0, func(r *explainRow) (float64, bool) { return r.c.MedianBps / 1e6, true })},
		{ExplainColumn{"sender's packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.txPkts, true })},
		{ExplainColumn{"receiver's packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.rxPkts, true })},
		{ExplainColumn{"sender's packets", "× the first", false}, ratio(func(r *explainRow) float64 { return r.txPkts }, false)},
		{ExplainColumn{"I/O syscalls", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.ioSys, own(r) })},
		{ExplainColumn{"other syscalls", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.sys - r.ioSys, own(r) })},
		{ExplainColumn{"I/O syscalls", "× the first", false}, ratio(func(r *explainRow) float64 { return r.ioSys }, true)},
		{ExplainColumn{"drops", "per MB", false}, num(2, func(r *explainRow) (float64, bool) { return r.drops, true })},
		{ExplainColumn{"client CPU", "ms per MB", false}, num(1, func(r *explainRow) (float64, bool) { return r.clientMs, r.hasEnds })},
		{ExplainColumn{"server CPU", "ms per MB", false}, num(1, func(r *explainRow) (float64, bool) { return r.serverMs, r.hasServer })},
		{ExplainColumn{"cycles", "per byte", false}, num(1, func(r *explainRow) (float64, bool) { return r.cyclesPB, r.hasCycles })},
		{ExplainColumn{"wire packets", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.wirePkts, r.hasWire })},
		{ExplainColumn{"TCP ACK-only", "per MB", false}, num(0, func(r *explainRow) (float64, bool) { return r.ackOnly, r.hasWire })},
		{ExplainColumn{"where dropped", "end, reason@function: per MB", true}, func(r, _ *explainRow) (string, bool) {
			var ks []string
			for k := range r.dropsAt {
				ks = append(ks, k)
			}
			if len(ks) == 0 {
				return "-", false
			}
			sort.Slice(ks, func(i, j int) bool { return r.dropsAt[ks[i]] > r.dropsAt[ks[j]] })
			var out []string
			for _, k := range ks {
				out = append(out, fmt.Sprintf("%s: %.2f", k, r.dropsAt[k]))
			}
			return strings.Join(out, "; "), true
		}},
	}
	// The values, then the columns some row has.
	vals := make([][]string, len(rows))
	used := make([]bool, len(cols))
	var base *explainRow
	for i := range rows {
		r := &rows[i]
		if i == 0 || group(rows[i-1].c) != group(r.c) {
			base = r
		}
		for j, c := range cols {
			v, ok := c.value(r, base)
			vals[i] = append(vals[i], v)
			used[j] = used[j] || ok
		}
	}
	t := &ExplainTable{}
	for j, c := range cols {
		if used[j] {
			t.Columns = append(t.Columns, c.ExplainColumn)
		}
	}
	for i := range rows {
		c := rows[i].c
		if i == 0 || group(rows[i-1].c) != group(c) {
			label := fmt.Sprintf("%s, %s, MTU %d, GSO %s, %s", c.Direction, sizeName(c.Size), c.MTU, onOff(c.GSO), map[bool]string{true: "encrypted", false: "unencrypted"}[c.Crypto])
			if c.Streams != 1 {
				label += fmt.Sprintf(", %d streams", c.Streams)
			}
			if c.CC != "" {
				label += ", cc " + c.CC
			}
			if c.Netem != "" {
				label += ", link " + c.Netem
			}
			t.Groups = append(t.Groups, ExplainGroup{Label: label})
		}
		row := ExplainRow{Column: c.ColumnName(), Key: c.Key}
		for j := range cols {
			if used[j] {
				row.Values = append(row.Values, vals[i][j])
			}
		}
		g := &t.Groups[len(t.Groups)-1]
		g.Rows = append(g.Rows, row)
	}
	for m := range missing {
		t.Missing = append(t.Missing, m)
	}
	sort.Strings(t.Missing)
	return t
}

// lessCell orders cells as `kqbench report --explain` does.
func lessCell(a, b results.CellResult) bool {
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

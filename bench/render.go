//go:build linux

package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTables prints the results in the shape of the kernel QUIC module's
// README: message sizes across, MTU (with a "no GSO" sub-row) down, each cell
// the transports' median goodput in Mbit/s side by side; one table for
// encrypted transports and one for unencrypted ones, per direction.
func WriteTables(w io.Writer, d *Document) error {
	if len(d.Spec.CC) > 1 { // one set of tables per congestion control
		for _, cc := range d.Spec.CC {
			if err := WriteTables(w, d.withCC(cc)); err != nil {
				return err
			}
		}
		return nil
	}
	if d.Spec.Mode == ModeHandshake {
		return writeHandshakeTables(w, d)
	}
	if d.Spec.Mode == ModeRR {
		return writeRRTables(w, d)
	}
	s := d.Spec
	cc := s.ccAxis()[0]
	if s.Mode == ModeStreams {
		if err := writeStreams(w, d); err != nil {
			return err
		}
	}
	caveat := d.Env.Machine.Caveat()
	if d.Env.PeerIsThisMachine {
		fmt.Fprintln(w, SamePeerWarning)
	}
	if d.Spec.Affinity != nil {
		fmt.Fprintf(w, "Streams pinned as iperf3 -A does: %s (--affinity)\n", d.Spec.Affinity)
	}
	for _, dir := range s.Directions {
		for _, crypto := range s.Crypto {
			var ts []string
			for _, t := range s.columns() {
				if tableHas(d, t, crypto, dir) {
					ts = append(ts, t)
				}
			}
			if len(ts) == 0 {
				continue
			}
			title := "Encrypted"
			if !crypto {
				var how []string
				for _, t := range ts {
					switch t {
					case "kquic":
						how = append(how, "kquic: disable_1rtt_encryption")
					case "tcp":
						how = append(how, "tcp: plain TCP")
					case "kquic(C)":
						how = append(how, "kquic(C): perf_test -x")
					case "tcp(C)":
						how = append(how, "tcp(C): iperf3")
					default:
						how = append(how, t)
					}
				}
				title = "Unencrypted (" + strings.Join(how, "; ") + ")"
			}
			if caveat != "" {
				fmt.Fprintln(w, caveat)
			}
			fmt.Fprintf(w, "%s, %s (%s), %d stream(s)%s: goodput in Mbit/s, median of %s; each cell %s\n",
				title, dir, dirWords(dir), s.Streams, s.impairTitle(cc), s.repeatText(), strings.Join(ts, " | "))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "\t")
			for _, z := range s.Sizes {
				fmt.Fprintf(tw, "%s\t", sizeName(z))
			}
			fmt.Fprintln(tw)
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					label := fmt.Sprintf("MTU %d", mtu)
					if !gso {
						label = "  no GSO"
						if !slices.Contains(s.GSO, true) {
							label = fmt.Sprintf("MTU %d no GSO", mtu)
						}
					}
					fmt.Fprintf(tw, "%s\t", label)
					for _, z := range s.Sizes {
						var vals []string
						for _, t := range ts {
							vals = append(vals, cellText(d, columnCell(t, Cell{Size: z, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc})))
						}
						fmt.Fprintf(tw, "%s\t", strings.Join(vals, " | "))
					}
					fmt.Fprintln(tw)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	writeNotes(w, d)
	return nil
}

func dirWords(dir string) string {
	if dir == "down" {
		return "server to client"
	}
	return "client to server"
}

func sizeName(z int) string {
	switch {
	case z >= 1<<20 && z%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", z>>20)
	case z >= 1<<10 && z%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", z>>10)
	}
	return fmt.Sprintf("%d B", z)
}

// tableHas reports whether a transport has any cell in the table that is not
// "n/a" (tcp has none among the encrypted ones).
func tableHas(d *Document, t string, crypto bool, dir string) bool {
	for _, c := range d.Cells {
		if c.ColumnName() == t && c.Crypto == crypto && c.Direction == dir && c.Status != StatusNA {
			return true
		}
	}
	return false
}

func cellText(d *Document, c Cell) string {
	r, ok := d.Lookup(c)
	if !ok {
		return "…"
	}
	switch r.Status {
	case StatusOK:
		s := strconv.FormatFloat(r.MedianBps/1e6, 'f', 0, 64)
		if r.WideSpread {
			s += "~"
		}
		return s
	case StatusNA:
		return "n/a"
	case StatusUnavailable:
		return "-"
	}
	return "FAIL"
}

func writeNotes(w io.Writer, d *Document) {
	seen := map[string]bool{}
	var notes []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	wide := false
	for _, c := range d.Cells {
		switch c.Status {
		case StatusUnavailable:
			add(fmt.Sprintf("-     %s is unavailable here: %s", c.ColumnName(), c.Note))
		case StatusNA:
			add(fmt.Sprintf("n/a   %s: %s", c.ColumnName(), strings.TrimPrefix(c.Note, "n/a: ")))
		case StatusFailed:
			add(fmt.Sprintf("FAIL  %s: %s", c.Key, c.Error))
		case StatusOK:
			wide = wide || c.WideSpread
			if !c.GSO {
				add(fmt.Sprintf("no GSO for %s: %s", c.Transport, c.GSONote))
			}
		}
	}
	for _, c := range d.Cells {
		if c.Status == StatusOK && !c.GSO && c.Offloads != "" {
			add("no GSO on the devices: " + c.Offloads[strings.Index(c.Offloads, ";")+2:])
			break
		}
	}
	if wide {
		add(fmt.Sprintf("~     spread above %.0f%% of the median (the median's %.0f%% interval over the repeats; the range up to 4 samples), after up to --max-repeat samples: the machine is not quiet, or measure with more --time", MaxSpread*100, SpreadConfidence*100))
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	writeStealNote(w, d)
}

// WriteCSV writes one row per cell with the summary and the mean CPU use,
// and, when the run counted (--explain, --capture), one column per counter:
// its mean per MB delivered.
func WriteCSV(w io.Writer, d *Document) error {
	if d.Spec.Mode == ModeHandshake {
		return writeHandshakeCSV(w, d)
	}
	cw := csv.NewWriter(w)
	keys := counterKeys(d)
	head := []string{"key", "transport", "size", "mtu", "gso", "crypto", "direction", "streams", "status",
		"median_mbps", "min_mbps", "max_mbps", "spread", "wide_spread", "samples", "busy_cores", "softirq_cores", "process_cores", "note", "error"}
	rr := d.Spec.Mode == ModeRR
	if rr {
		head = append(head, rrCSVHead()...)
	}
	native := slices.ContainsFunc(d.Cells, func(c CellResult) bool { return c.Driver != "" })
	if native { // only then, so that go-only files read as before
		head = append(head, "driver")
	}
	for _, k := range keys {
		head = append(head, "per_mb."+k)
	}
	cw.Write(head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, c := range d.Cells {
		var busy, soft, proc float64
		for _, s := range c.Samples {
			busy += s.CPU.BusyCores
			soft += s.CPU.SoftirqCores
			proc += s.CPU.ProcessCores
		}
		if n := float64(len(c.Samples)); n > 0 {
			busy, soft, proc = busy/n, soft/n, proc/n
		}
		row := []string{c.Key, c.Transport, strconv.Itoa(c.Size), strconv.Itoa(c.MTU), onOff(c.GSO), onOff(c.Crypto), c.Direction,
			strconv.Itoa(c.Streams), c.Status, f(c.MedianBps / 1e6), f(c.MinBps / 1e6), f(c.MaxBps / 1e6), f(c.Spread),
			strconv.FormatBool(c.WideSpread), strconv.Itoa(len(c.Samples)), f(busy), f(soft), f(proc), c.Note, c.Error}
		if rr {
			row = append(row, rrCSVRow(c)...)
		}
		if native {
			row = append(row, driverName(c.Driver))
		}
		for _, k := range keys {
			sum, n := 0.0, 0
			for _, s := range c.Samples {
				if v, ok := s.Counters[k]; ok && s.Bytes > 0 {
					sum += v / (float64(s.Bytes) / 1e6)
					n++
				}
			}
			if n == 0 {
				row = append(row, "")
			} else {
				row = append(row, f(sum/float64(n)))
			}
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// counterKeys is the sorted union of the counters the samples carry.
func counterKeys(d *Document) []string {
	seen := map[string]bool{}
	var keys []string
	for _, c := range d.Cells {
		for _, s := range c.Samples {
			for k := range s.Counters {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	slices.Sort(keys)
	return keys
}

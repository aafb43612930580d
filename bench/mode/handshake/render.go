package handshake

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() {
	render.RegisterView(Name, render.View{Tables: writeTables, CSV: writeCSV, Explain: writeExplain})
}

// writeTables prints a handshake-mode run: one table per MTU, GSO
// setting and request size, a row per setup, with the median handshakes per
// second and the percentiles of the time to the first byte of the answer.
func writeTables(w io.Writer, d *results.Document) error {
	s := d.Spec
	caveat := d.Env.Machine.Caveat()
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, size := range s.Sizes {
				var rows []results.CellResult
				for _, c := range d.Cells {
					if c.MTU == mtu && c.GSO == gso && c.Size == size && c.Status != results.StatusNA {
						rows = append(rows, c)
					}
				}
				if len(rows) == 0 {
					continue
				}
				if caveat != "" {
					fmt.Fprintln(w, caveat)
				}
				gsoText := ""
				if !gso {
					gsoText = ", no GSO"
				}
				fmt.Fprintf(w, "Handshakes: a fresh connection per exchange of a %s request and a %s answer, MTU %d%s, %d at once; median of %s samples of %v\n",
					render.SizeName(size), render.SizeName(size), mtu, gsoText, s.Streams, s.RepeatText(), s.Time)
				fmt.Fprintln(w, "TTFB: from the start of the dial to the first byte of the answer, in ms, over every exchange")
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "setup\thandshakes/s\tTTFB p50\tp90\tp99\tp99.9\tmax\tresumed\t0-RTT\t")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t", SetupName(r.Cell))
					h := SummaryOf(&r)
					if r.Status != results.StatusOK || h == nil {
						fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\n", render.StatusText(r.Status))
						continue
					}
					rate := strconv.FormatFloat(h.MedianPerSecond, 'f', 0, 64)
					if h.WideSpread {
						rate += "~"
					}
					l := h.TTFB
					fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t\n", rate,
						msf(l.P50), msf(l.P90), msf(l.P99), msf(l.P999), msf(l.Max),
						render.Share(h.Resumed, h.Handshakes), render.Share(h.Early, h.Handshakes))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
		}
	}
	writeNotes(w, d)
	return nil
}

func msf(us int64) float64 { return float64(us) / 1000 }

func writeNotes(w io.Writer, d *results.Document) {
	seen := map[string]bool{}
	wide := false
	for _, c := range d.Cells {
		var note string
		switch c.Status {
		case results.StatusUnavailable:
			note = fmt.Sprintf("-     %s is unavailable here: %s", c.Transport, c.Note)
		case results.StatusFailed:
			note = fmt.Sprintf("FAIL  %s: %s", c.Key, c.Error)
		case results.StatusOK:
			wide = wide || (SummaryOf(&c) != nil && SummaryOf(&c).WideSpread)
		}
		if note != "" && !seen[note] {
			seen[note] = true
			fmt.Fprintln(w, note)
		}
	}
	if wide {
		fmt.Fprintf(w, "~     spread of the handshake rates above %.0f%% of the median (its %.0f%% interval over the repeats; the range up to 4 samples): the machine is not quiet, or measure with more --time\n", results.MaxSpread*100, results.SpreadConfidence*100)
	}
	render.WriteRunNotes(w, d)
}

// writeCSV writes one row per handshake-mode cell, and, when the
// run counted (--explain), one column per counter: its mean per handshake.
func writeCSV(w io.Writer, d *results.Document) error {
	cw := csv.NewWriter(w)
	keys := render.CounterKeys(d)
	head := []string{"key", "setup", "transport", "early", "size", "mtu", "gso", "concurrency", "status",
		"median_handshakes_per_s", "min_handshakes_per_s", "max_handshakes_per_s", "spread", "wide_spread", "samples", "handshakes",
		"resumed", "early_accepted", "ttfb_min_ms", "ttfb_p50_ms", "ttfb_p90_ms", "ttfb_p99_ms", "ttfb_p99_9_ms", "ttfb_max_ms", "ttfb_mean_ms",
		"busy_cores", "note", "error"}
	for _, k := range keys {
		head = append(head, "per_handshake."+k)
	}
	cw.Write(head)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, c := range d.Cells {
		h := SummaryOf(&c)
		if h == nil {
			h = &Summary{}
		}
		var busy float64
		for _, s := range c.Samples {
			busy += s.CPU.BusyCores
		}
		if n := float64(len(c.Samples)); n > 0 {
			busy /= n
		}
		l := h.TTFB
		row := []string{c.Key, SetupName(c.Cell), c.Transport, strconv.FormatBool(c.Early), strconv.Itoa(c.Size), strconv.Itoa(c.MTU), matrix.OnOff(c.GSO),
			strconv.Itoa(c.Streams), string(c.Status), f(h.MedianPerSecond), f(h.MinPerSecond), f(h.MaxPerSecond), f(h.Spread),
			strconv.FormatBool(h.WideSpread), strconv.Itoa(len(c.Samples)), strconv.FormatInt(h.Handshakes, 10),
			strconv.FormatInt(h.Resumed, 10), strconv.FormatInt(h.Early, 10),
			f(msf(l.Min)), f(msf(l.P50)), f(msf(l.P90)), f(msf(l.P99)), f(msf(l.P999)), f(msf(l.Max)), f(l.Mean / 1000),
			f(busy), c.Note, c.Error}
		for _, k := range keys {
			if v, ok := perHandshake(c, k); ok {
				row = append(row, f(v))
			} else {
				row = append(row, "")
			}
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// perHandshake is a counter's mean per handshake over a cell's samples.
func perHandshake(c results.CellResult, key string) (float64, bool) {
	sum, n := 0.0, 0
	for _, s := range c.Samples {
		v, ok := s.Counters[key]
		hs := SampleOf(&s)
		if !ok || hs == nil || hs.Handshakes == 0 {
			continue
		}
		sum += v / float64(hs.Handshakes)
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// writeExplain prints, for every handshake-mode cell with
// counters (--explain), what one exchange (connection, request, answer,
// close) cost: packets each end's device sent, syscalls of the process
// (both ends), those that move data, and drops.
func writeExplain(w io.Writer, d *results.Document) error {
	fmt.Fprintln(w, "Per exchange (connection setup, request, answer, close), means over the samples:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setup\tsize\tMTU\tclient pkts\tserver pkts\tsyscalls\tI/O syscalls\tdrops\t")
	rows := 0
	missing := map[string]bool{}
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		for _, s := range c.Samples {
			for _, m := range s.CountersMissing {
				missing[m] = true
			}
		}
		get := func(k string) float64 { v, _ := perHandshake(c, k); return v }
		if _, ok := perHandshake(c, "client.tx_packets"); !ok {
			if _, ok := perHandshake(c, "client.syscalls"); !ok {
				continue
			}
		}
		sys := get("client.syscalls") + get("server.syscalls") + get("process.syscalls")
		var io float64
		for _, k := range render.CounterKeys(&results.Document{Cells: []results.CellResult{c}}) {
			if render.IOSyscall(k) {
				io += get(k)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t\n", SetupName(c.Cell), render.SizeName(c.Size), c.MTU,
			get("client.tx_packets"), get("server.tx_packets"), sys, io, get("client.drops")+get("server.drops"))
		rows++
	}
	if rows == 0 {
		fmt.Fprintln(w, "no counters in this run (run with --explain)")
	} else if err := tw.Flush(); err != nil {
		return err
	}
	if len(missing) > 0 {
		var m []string
		for k := range missing {
			m = append(m, k)
		}
		slices.Sort(m)
		fmt.Fprintf(w, "not counted: %s\n", strings.Join(m, "; "))
	}
	return nil
}

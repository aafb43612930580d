package h3

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() {
	render.RegisterView(Name, render.View{Tables: writeTables, CSV: writeCSV, Explain: writeExplain})
}

// writeTables prints an h3-mode run: a table per workload (and MTU,
// GSO setting, congestion control), a row per transport with its figure
// (goodput, requests per second, time to last byte, time to first byte),
// latency percentiles where the workload has many requests, the setups'
// round trips at the netem delay, and the UDP datagrams dropped for a full
// receive buffer.
func writeTables(w io.Writer, d *results.Document) error {
	if c := d.Env.Machine.Caveat(); c != "" {
		fmt.Fprintln(w, c)
	}
	s := d.Spec
	fmt.Fprintf(w, "Web workloads (--mode h3), median of %s samples", s.RepeatText())
	if s.Netem != "" {
		n := s.Impairment()
		fmt.Fprintf(w, "; netem %s (round trip %v, loss %g%%, reorder %g%%)", s.Netem, n.Delay, n.Loss, n.Reorder)
	}
	fmt.Fprintln(w)
	var groups []string
	byGroup := map[string][]results.CellResult{}
	for _, c := range d.Cells {
		g := fmt.Sprintf("%s, MTU %d", WorkloadText(c.Cell), c.MTU)
		if !c.GSO {
			g += ", no GSO"
		}
		if c.CC != "" {
			g += ", cc " + c.CC
		}
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], c)
	}
	for _, g := range groups {
		cells := byGroup[g]
		fig, _ := FigureOf(cells[0].Workload)
		unit := webUnit(fig)
		fmt.Fprintln(w, g)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "transport\t" + unit + "\t"
		switch {
		case cells[0].Workload == WorkloadObjects:
			head += "p50 ms\tp90\tp99\tp99.9\t"
		case strings.HasPrefix(cells[0].Workload, "setup-"):
			head += "p99 ms\tround trips\tresumed\t0-RTT\t"
		}
		fmt.Fprintln(tw, head+"rcvbuf drops\tstream window\t")
		for _, c := range cells {
			fmt.Fprintf(tw, "%s\t", c.Transport)
			ws := SummaryOf(&c)
			if c.Status != results.StatusOK || ws == nil {
				fmt.Fprintf(tw, "%s\t\n", render.StatusText(c.Status))
				continue
			}
			v := webShown(fig, ws.Median)
			if ws.WideSpread {
				v += "~"
			}
			fmt.Fprintf(tw, "%s\t", v)
			l := ws.Latency
			switch {
			case c.Workload == WorkloadObjects && l != nil:
				fmt.Fprintf(tw, "%.2f\t%.2f\t%.2f\t%.2f\t", ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999))
			case strings.HasPrefix(c.Workload, "setup-"):
				p99 := "-"
				if l != nil {
					p99 = fmt.Sprintf("%.2f", ms(l.P99))
				}
				rtts := "-"
				if rtt := SampleOf(&c.Samples[0]).RTTSeconds; rtt > 0 {
					rtts = fmt.Sprintf("%.1f", ws.Median/rtt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", p99, rtts, render.Share(ws.Resumed, ws.Requests), render.Share(ws.Early, ws.Requests))
			}
			fmt.Fprintf(tw, "%d\t%s\t\n", ws.ServerRcvbufErrors+ws.ClientRcvbufErrors, windowText(receiver(c)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	writeNotes(w, d)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// webUnit is a figure's column heading.
func webUnit(fig string) string {
	switch fig {
	case "goodput bit/s":
		return "Mbit/s"
	case "requests/s":
		return "requests/s"
	case "time to last byte s":
		return "last byte ms"
	}
	return "TTFB ms"
}

// webShown is a figure in its column's unit.
func webShown(fig string, v float64) string {
	switch fig {
	case "goodput bit/s":
		return strconv.FormatFloat(v/1e6, 'f', 1, 64)
	case "requests/s":
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v*1e3, 'f', 2, 64)
}

// receiver is the settings of the end that receives a cell's bodies: the
// client for downloads and everything fetched, the server for uploads.
func receiver(c results.CellResult) WebSettings {
	if len(c.Samples) == 0 || SampleOf(&c.Samples[len(c.Samples)-1]) == nil {
		return WebSettings{}
	}
	s := SampleOf(&c.Samples[len(c.Samples)-1])
	if c.Workload == WorkloadUpload {
		return s.Server
	}
	return s.Client
}

// windowText is an end's stream window as a table shows it.
func windowText(s WebSettings) string {
	if s.StreamWindow == 0 {
		return "?"
	}
	t := render.SizeName(int(s.StreamWindow))
	if s.Autotuned {
		t = render.SizeName(int(s.InitialStreamWindow)) + "-" + t
	}
	return t
}

func writeNotes(w io.Writer, d *results.Document) {
	seen := map[string]bool{}
	for _, t := range d.Spec.Transports {
		fmt.Fprintf(w, "%-11s %s\n", t, TransportText(t))
	}
	fmt.Fprintln(w, "stream window: what the receiving end grants per stream (the client for downloads, objects and pages; the server for uploads); rcvbuf drops: UDP datagrams the kernel dropped for a full socket receive buffer (Udp RcvbufErrors, both namespaces); round trips: the setup's median TTFB over the netem round trip")
	for _, c := range d.Cells {
		var note string
		switch c.Status {
		case results.StatusUnavailable:
			note = fmt.Sprintf("-     %s is unavailable here: %s", c.Transport, c.Note)
		case results.StatusNA:
			note = fmt.Sprintf("n/a   %s, %s: %s", c.Transport, c.Workload, c.Note)
		case results.StatusFailed:
			note = fmt.Sprintf("FAIL  %s: %s", c.Key, c.Error)
		case results.StatusOK:
			if c.Note != "" {
				note = fmt.Sprintf("      %s: %s", c.Transport, c.Note)
			}
		}
		if note != "" && !seen[note] {
			seen[note] = true
			fmt.Fprintln(w, note)
		}
	}
	render.WriteRunNotes(w, d)
}

// A WebBrake is what held an h3-mode cell back, as --explain names it.
type WebBrake struct {
	// Kind is "window" (flow control capping goodput at window/RTT) or
	// "rcvbuf" (datagrams dropped for a full UDP receive buffer).
	Kind string
	Text string
}

// webWindowShare is how close to window/RTT a goodput must come to be
// called window-limited. A flow-controlled transfer cannot exceed it (the
// receiver grants a window a round trip); a CPU-starved one (an emulated,
// loaded machine) stays below it, so the bar is well under 1; and slow
// start alone keeps a transfer of a few round trips far below a window it
// does not reach.
const webWindowShare = 0.25

// WebBrakes are the brakes of an h3-mode cell: a download or upload whose
// goodput came within reach (a quarter or more) of the receiver's
// flow-control window over the round trip, and UDP datagrams dropped for a full receive buffer.
func WebBrakes(c results.CellResult) []WebBrake {
	sum := SummaryOf(&c)
	if c.Status != results.StatusOK || sum == nil || len(c.Samples) == 0 {
		return nil
	}
	var out []WebBrake
	s := SampleOf(&c.Samples[len(c.Samples)-1])
	if s == nil {
		return nil
	}
	if c.Workload == WorkloadDownload || c.Workload == WorkloadUpload {
		rcv := receiver(c)
		win := rcv.StreamWindow
		if rcv.ConnWindow > 0 && (win == 0 || rcv.ConnWindow < win) {
			win = rcv.ConnWindow
		}
		if rtt := s.RTTSeconds; rtt > 0 && win > 0 {
			limit := float64(win) * 8 / rtt
			g := sum.Median
			if g >= webWindowShare*limit {
				which := "stream"
				if win == rcv.ConnWindow && win != rcv.StreamWindow {
					which = "connection"
				}
				out = append(out, WebBrake{Kind: "window", Text: fmt.Sprintf(
					"window-limited: %.1f Mbit/s is %.0f%% of the %s flow-control window over the round trip (%s / %v = %.1f Mbit/s) that the %s %s grants; a larger window lifts it (--window; nginx: http3_stream_buffer_size)",
					g/1e6, g*100/limit, which, render.SizeName(int(win)), time.Duration(rtt*float64(time.Second)).Round(time.Millisecond), limit/1e6,
					map[bool]string{true: "server", false: "client"}[c.Workload == WorkloadUpload], rcv.Protocol+"/"+rcv.Stack)})
			}
		}
	}
	if n := sum.ServerRcvbufErrors + sum.ClientRcvbufErrors; n > 0 {
		buf := ""
		for _, e := range []struct {
			end string
			s   WebSettings
		}{{"server", s.Server}, {"client", s.Client}} {
			if e.s.UDPRcvBufGranted > 0 {
				buf += fmt.Sprintf("; the %s's socket got %d bytes (asked %d)", e.end, e.s.UDPRcvBufGranted, e.s.UDPRcvBufAsked)
			}
		}
		rmem := ""
		if s.RmemMax > 0 {
			rmem = fmt.Sprintf(" (now %d)", s.RmemMax)
		}
		out = append(out, WebBrake{Kind: "rcvbuf", Text: fmt.Sprintf(
			"UDP receive buffer overflowed: %d datagrams dropped (Udp RcvbufErrors in /proc/net/snmp: %d in the server's namespace, %d in the client's)%s; raise net.core.rmem_max%s (sysctl -w net.core.rmem_max=%d) and ask for more per socket (--udp-rcvbuf 4M)",
			n, sum.ServerRcvbufErrors, sum.ClientRcvbufErrors, buf, rmem, 8<<20)})
	}
	return out
}

// writeExplain prints, per h3-mode cell, the HTTP-layer settings in
// force at both ends and the brakes.
func writeExplain(w io.Writer, d *results.Document) error {
	fmt.Fprintln(w, "Why (--mode h3): the HTTP-layer settings in force (each transport's first cell) and the brakes of every cell that has one")
	shown := map[string]bool{}
	for _, c := range d.Cells {
		if c.Status != results.StatusOK || len(c.Samples) == 0 || SampleOf(&c.Samples[0]) == nil {
			continue
		}
		s := SampleOf(&c.Samples[len(c.Samples)-1])
		bs := WebBrakes(c)
		if shown[c.Transport] && len(bs) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, %s:\n", c.Transport, WorkloadText(c.Cell))
		for _, e := range []struct {
			end string
			s   WebSettings
		}{{"client", s.Client}, {"server", s.Server}} {
			if shown[c.Transport] {
				break
			}
			fmt.Fprintf(w, "  %s %s/%s: stream window %s, connection window %s", e.end, e.s.Protocol, e.s.Stack, windowText(e.s), sizeOrUnknown(e.s.ConnWindow))
			if e.s.MaxStreams > 0 {
				fmt.Fprintf(w, ", %d streams", e.s.MaxStreams)
			}
			if e.s.UDPRcvBufGranted > 0 || e.s.UDPRcvBufAsked > 0 {
				fmt.Fprintf(w, ", UDP receive buffer asked %d, granted %d", e.s.UDPRcvBufAsked, e.s.UDPRcvBufGranted)
			}
			fmt.Fprintln(w)
			for _, n := range e.s.Notes {
				fmt.Fprintf(w, "    %s\n", n)
			}
		}
		shown[c.Transport] = true
		if len(bs) == 0 {
			fmt.Fprintln(w, "  no brake found (no window within reach at this round trip, no receive-buffer drop)")
		}
		for _, b := range bs {
			fmt.Fprintf(w, "  BRAKE %s\n", b.Text)
		}
	}
	return nil
}

func sizeOrUnknown(n int64) string {
	if n <= 0 {
		return "?"
	}
	return render.SizeName(int(n))
}

// writeCSV writes one row per h3-mode cell.
func writeCSV(w io.Writer, d *results.Document) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"key", "transport", "workload", "size", "conns", "streams", "mtu", "gso", "netem", "cc", "status",
		"figure", "median", "min", "max", "spread", "wide_spread", "samples", "requests", "errors", "resumed", "early",
		"p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "server_rcvbuf_errors", "client_rcvbuf_errors", "brakes", "note", "error"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	for _, c := range d.Cells {
		row := []string{c.Key, c.Transport, c.Workload, strconv.Itoa(c.Size), strconv.Itoa(c.Conns), strconv.Itoa(c.Streams),
			strconv.Itoa(c.MTU), matrix.OnOff(c.GSO), c.Netem, c.CC, string(c.Status)}
		if ws := SummaryOf(&c); ws != nil {
			var p [4]string
			if l := ws.Latency; l != nil {
				p = [4]string{f(ms(l.P50)), f(ms(l.P90)), f(ms(l.P99)), f(ms(l.P999))}
			}
			var kinds []string
			for _, b := range WebBrakes(c) {
				kinds = append(kinds, b.Kind)
			}
			row = append(row, ws.Figure, f(ws.Median), f(ws.Min), f(ws.Max), f(ws.Spread), strconv.FormatBool(ws.WideSpread),
				strconv.Itoa(len(c.Samples)), strconv.FormatInt(ws.Requests, 10), strconv.FormatInt(ws.Errors, 10),
				strconv.FormatInt(ws.Resumed, 10), strconv.FormatInt(ws.Early, 10), p[0], p[1], p[2], p[3],
				strconv.FormatInt(ws.ServerRcvbufErrors, 10), strconv.FormatInt(ws.ClientRcvbufErrors, 10), strings.Join(kinds, " "))
		} else {
			row = append(row, make([]string, 18)...)
		}
		cw.Write(append(row, c.Note, c.Error))
	}
	cw.Flush()
	return cw.Error()
}

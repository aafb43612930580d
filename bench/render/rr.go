package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// writeRRTables prints an rr matrix: per encryption and connection count, a
// table in the shape of the bulk ones (response sizes across, MTU and GSO
// down, each cell the transports' median requests per second side by
// side), then the latency of every cell: requests per second, mean and the
// percentiles p50..p99.99 of the round trips of all its samples, in µs.
func writeRRTables(w io.Writer, d *results.Document) error {
	s := d.Spec
	caveat := d.Env.Machine.Caveat()
	if d.Env.PeerIsThisMachine {
		fmt.Fprintln(w, SamePeerWarning)
	}
	for _, conns := range s.Conns {
		for _, crypto := range s.Crypto {
			var ts []string
			for _, t := range s.Transports {
				if rrTableHas(d, t, crypto, conns) {
					ts = append(ts, t)
				}
			}
			if len(ts) == 0 {
				continue
			}
			title := "Encrypted"
			if !crypto {
				title = "Unencrypted"
			}
			if caveat != "" {
				fmt.Fprintln(w, caveat)
			}
			fmt.Fprintf(w, "%s, request/response, %d-byte requests, %d connection(s) with one request in flight each: requests/s, median of %s; each cell %s\n",
				title, s.ReqSize, conns, s.RepeatText(), strings.Join(ts, " | "))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "response\t")
			for _, z := range s.Sizes {
				fmt.Fprintf(tw, "%s\t", SizeName(z))
			}
			fmt.Fprintln(tw)
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					fmt.Fprintf(tw, "%s\t", RowLabel(s, mtu, gso))
					for _, z := range s.Sizes {
						var vals []string
						for _, t := range ts {
							vals = append(vals, rrCellText(d, rrCell(s, t, z, mtu, gso, crypto, conns)))
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

			fmt.Fprintf(w, "%s, request/response, %d-byte requests, %d connection(s): round-trip latency in µs over every round trip of the %d samples\n",
				title, s.ReqSize, conns, s.Repeat)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "\tresponse\ttransport\treq/s\tmean\tp50\tp90\tp99\tp99.9\tp99.99\tmax\t")
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					for _, z := range s.Sizes {
						for _, t := range ts {
							r, ok := d.Lookup(rrCell(s, t, z, mtu, gso, crypto, conns))
							if !ok || r.Status != results.StatusOK || r.RR == nil {
								continue
							}
							l := r.RR.Latency
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
								RowLabel(s, mtu, gso), SizeName(z), t, rrCellText(d, r.Cell),
								us(l.Mean), us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.P9999), us(l.Max))
						}
					}
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	WriteNotes(w, d)
	fmt.Fprintln(w, "rr mode sends each write at once: kquic with stream_data_nodelay, TCP (and kTLS under it) with TCP_NODELAY")
	return nil
}

func rrCell(s matrix.Spec, t string, size, mtu int, gso, crypto bool, conns int) matrix.Cell {
	return matrix.Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: matrix.DirectionRR, Streams: 1,
		Mode: matrix.ModeRR, ReqSize: s.ReqSize, Conns: conns}
}

func rrTableHas(d *results.Document, t string, crypto bool, conns int) bool {
	for _, c := range d.Cells {
		if c.Transport == t && c.Crypto == crypto && c.Conns == conns && c.Status != results.StatusNA {
			return true
		}
	}
	return false
}

// rrCellText is an rr cell's entry in a table: its median requests per
// second ("~" when wide), or what its status says.
func rrCellText(d *results.Document, c matrix.Cell) string {
	return FigureText(d, c, func(r *results.CellResult) (float64, bool) {
		if r.RR == nil {
			return 0, false
		}
		return r.RR.MedianPerSecond, true
	})
}

// rrCSVHead and rrCSVRow are the CSV's rr columns (in rr mode only).
func rrCSVHead() []string {
	return []string{"mode", "req_size", "conns", "median_rps", "min_rps", "max_rps", "requests",
		"mean_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us", "max_us"}
}

func rrCSVRow(c results.CellResult) []string {
	row := []string{string(c.Mode), strconv.Itoa(c.ReqSize), strconv.Itoa(c.Conns)}
	if c.RR == nil {
		return append(row, make([]string, len(rrCSVHead())-len(row))...)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	l := c.RR.Latency
	return append(row, f(c.RR.MedianPerSecond), f(c.RR.MinPerSecond), f(c.RR.MaxPerSecond), strconv.FormatInt(l.Count, 10),
		f(us(l.Mean)), f(us(l.P50)), f(us(l.P90)), f(us(l.P99)), f(us(l.P999)), f(us(l.P9999)), f(us(l.Max)))
}

// us is a duration in microseconds.
func us(d time.Duration) float64 { return float64(d) / 1e3 }

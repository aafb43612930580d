package rr

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() {
	render.RegisterView(Name, render.View{Tables: writeTables, Columns: &render.Columns{Head: csvHead(), Row: csvRow}})
}

// writeTables prints an rr matrix: per encryption and connection count, a
// table in the shape of the bulk ones (response sizes across, MTU and GSO
// down, each cell the transports' median requests per second side by
// side), then the latency of every cell: requests per second, mean and the
// percentiles p50..p99.99 of the round trips of all its samples, in µs.
func writeTables(w io.Writer, d *results.Document) error {
	s := d.Spec
	caveat := d.Env.Machine.Caveat()
	if d.Env.PeerIsThisMachine {
		fmt.Fprintln(w, render.SamePeerWarning)
	}
	for _, conns := range s.Conns {
		for _, crypto := range s.Crypto {
			var ts []string
			for _, t := range s.Transports {
				if tableHas(d, t, crypto, conns) {
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
				fmt.Fprintf(tw, "%s\t", render.SizeName(z))
			}
			fmt.Fprintln(tw)
			for _, mtu := range s.MTUs {
				for _, gso := range s.GSO {
					fmt.Fprintf(tw, "%s\t", render.RowLabel(s, mtu, gso))
					for _, z := range s.Sizes {
						var vals []string
						for _, t := range ts {
							vals = append(vals, cellText(d, Cell(s, t, z, mtu, gso, crypto, conns)))
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
							r, ok := d.Lookup(Cell(s, t, z, mtu, gso, crypto, conns))
							if !ok || r.Status != results.StatusOK || SummaryOf(r) == nil {
								continue
							}
							sum := SummaryOf(r)
							l := sum.Latency
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
								render.RowLabel(s, mtu, gso), render.SizeName(z), t, cellText(d, r.Cell),
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
	render.WriteNotes(w, d)
	fmt.Fprintln(w, "rr mode sends each write at once: kquic with stream_data_nodelay, TCP (and kTLS under it) with TCP_NODELAY")
	return nil
}

func tableHas(d *results.Document, t string, crypto bool, conns int) bool {
	for _, c := range d.Cells {
		if c.Transport == t && c.Crypto == crypto && c.Conns == conns && c.Status != results.StatusNA {
			return true
		}
	}
	return false
}

// cellText is an rr cell's entry in a table: its median requests per
// second ("~" when wide), or what its status says.
func cellText(d *results.Document, c matrix.Cell) string {
	return render.FigureText(d, c, func(r *results.CellResult) (float64, bool) {
		if sum := SummaryOf(r); sum != nil {
			return sum.MedianPerSecond, true
		}
		return 0, false
	})
}

// csvHead and csvRow are the rr columns of the goodput CSV.
func csvHead() []string {
	return []string{"mode", "req_size", "conns", "median_rps", "min_rps", "max_rps", "requests",
		"mean_us", "p50_us", "p90_us", "p99_us", "p99_9_us", "p99_99_us", "max_us"}
}

func csvRow(c results.CellResult) []string {
	row := []string{string(c.Mode), strconv.Itoa(c.ReqSize), strconv.Itoa(c.Conns)}
	sum := SummaryOf(&c)
	if sum == nil {
		return append(row, make([]string, len(csvHead())-len(row))...)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	l := sum.Latency
	return append(row, f(sum.MedianPerSecond), f(sum.MinPerSecond), f(sum.MaxPerSecond), strconv.FormatInt(l.Count, 10),
		f(us(l.Mean)), f(us(l.P50)), f(us(l.P90)), f(us(l.P99)), f(us(l.P999)), f(us(l.P9999)), f(us(l.Max)))
}

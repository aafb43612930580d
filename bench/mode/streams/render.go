package streams

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() { render.RegisterView(Name, render.View{Tables: writeTables}) }

// writeTables prints the objects' completion times (writeStreams), then
// the goodput tables of the same cells.
func writeTables(w io.Writer, d *results.Document) error {
	if err := writeStreams(w, d); err != nil {
		return err
	}
	return render.WriteGoodputTables(w, d)
}

// streamsHow says how a streams-mode cell carried its objects.
func streamsHow(c matrix.Cell) string {
	switch {
	case c.Mux:
		return "1 connection, framed (HTTP/2-like)"
	case Muxable(c.Transport):
		return fmt.Sprintf("%d connections", c.Streams)
	}
	return fmt.Sprintf("%d streams, 1 connection", c.Streams)
}

// medianOf is the median of v (v is sorted in place).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// writeStreams prints the per-stream completion times of a streams-mode
// run: for each cell the median over its samples of the median object's
// and the slowest object's time.
func writeStreams(w io.Writer, d *results.Document) error {
	s := d.Spec
	if caveat := d.Env.Machine.Caveat(); caveat != "" {
		fmt.Fprintln(w, caveat)
	}
	fmt.Fprintf(w, "Per-stream completion, %d objects sent at once client to server%s: ms, median over %d sample(s) of each sample's median and slowest object\n",
		s.Streams, render.ImpairTitle(&s, ""), s.Repeat)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transport\tcarried over\tsize\tMTU\tGSO\tcrypto\tcc\tmedian object ms\tslowest object ms\tgoodput Mbit/s\t")
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		var med, slow []float64
		for _, smp := range c.Samples {
			v := append([]float64(nil), SecondsOf(&smp)...)
			if len(v) == 0 {
				continue
			}
			med = append(med, medianOf(v))
			slow = append(slow, v[len(v)-1])
		}
		cc := c.CC
		if cc == "" {
			cc = "default"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t\n", c.Transport, streamsHow(c.Cell), render.SizeName(c.Size), c.MTU, matrix.OnOff(c.GSO), matrix.OnOff(c.Crypto), cc,
			medianOf(med)*1000, medianOf(slow)*1000, c.MedianBps/1e6)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

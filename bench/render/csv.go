package render

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// WriteCSV writes the results' CSV summary: its mode's (View.CSV), or one
// row per cell with the summary and the mean CPU use, the mode's columns
// (View.Columns), and, when the run counted (--explain, --capture), one
// column per counter: its mean per MB delivered.
func WriteCSV(w io.Writer, d *results.Document) error {
	v := viewOf(d)
	if v.CSV != nil {
		return v.CSV(w, d)
	}
	cols := v.columnsFor(d)
	cw := csv.NewWriter(w)
	keys := CounterKeys(d)
	head := []string{"key", "transport", "size", "mtu", "gso", "crypto", "direction", "streams", "status",
		"median_mbps", "min_mbps", "max_mbps", "spread", "wide_spread", "samples", "busy_cores", "softirq_cores", "process_cores", "note", "error"}
	if cols != nil {
		head = append(head, cols.Head...)
	}
	native := slices.ContainsFunc(d.Cells, func(c results.CellResult) bool { return c.Driver != "" })
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
		row := []string{c.Key, c.Transport, strconv.Itoa(c.Size), strconv.Itoa(c.MTU), matrix.OnOff(c.GSO), matrix.OnOff(c.Crypto), string(c.Direction),
			strconv.Itoa(c.Streams), string(c.Status), f(c.MedianBps / 1e6), f(c.MinBps / 1e6), f(c.MaxBps / 1e6), f(c.Spread),
			strconv.FormatBool(c.WideSpread), strconv.Itoa(len(c.Samples)), f(busy), f(soft), f(proc), c.Note, c.Error}
		if cols != nil {
			row = append(row, cols.Row(c)...)
		}
		if native {
			row = append(row, string(matrix.DriverName(c.Driver)))
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

// CounterKeys is the sorted union of the counters the samples carry.
func CounterKeys(d *results.Document) []string {
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

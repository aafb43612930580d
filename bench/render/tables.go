package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// WriteTables prints the results' tables: its mode's (View.Tables), or the
// goodput tables (WriteGoodputTables); those of each congestion control
// of a run of several, each after what the two ends were.
func WriteTables(w io.Writer, d *results.Document) error {
	if len(d.Spec.CC) > 1 { // one set of tables per congestion control
		for _, cc := range d.Spec.CC {
			if err := WriteTables(w, withCC(d, cc)); err != nil {
				return err
			}
		}
		return nil
	}
	if line := d.Env.TopologyLine(); line != "" {
		fmt.Fprintln(w, line) // two guests on one host, not two machines
	}
	if v := viewOf(d); v.Tables != nil {
		return v.Tables(w, d)
	}
	return WriteGoodputTables(w, d)
}

// WriteGoodputTables prints the results in the shape of the kernel QUIC
// module's README: message sizes across, MTU (with a "no GSO" sub-row)
// down, each cell the transports' median goodput in Mbit/s side by side;
// one table for encrypted transports and one for unencrypted ones, per
// direction; then the notes (WriteNotes).
func WriteGoodputTables(w io.Writer, d *results.Document) error {
	s := d.Spec
	cc := s.CCAxis()[0]
	caveat := d.Env.Machine.Caveat()
	if d.Env.PeerIsThisMachine {
		fmt.Fprintln(w, SamePeerWarning)
	}
	if d.Spec.Affinity != nil {
		fmt.Fprintf(w, "Streams pinned as iperf3 -A does: %s (--affinity)\n", d.Spec.Affinity)
	}
	for _, dir := range s.Directions {
		for _, crypto := range s.Crypto {
			if err := writeGoodputTable(w, d, dir, crypto, cc, caveat); err != nil {
				return err
			}
		}
	}
	WriteNotes(w, d)
	return nil
}

// writeGoodputTable writes the table of one direction and encryption
// setting: rows MTU x GSO, columns the sizes, each cell the transports'
// medians; nothing if no transport has a cell in it.
func writeGoodputTable(w io.Writer, d *results.Document, dir matrix.Direction, crypto bool, cc, caveat string) error {
	s := d.Spec
	var ts []string
	for _, t := range s.Columns() {
		if tableHas(d, t, crypto, dir) {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	ts = KernelFirst(d, ts)
	title := "Encrypted"
	if !crypto {
		var how []string
		for _, t := range ts {
			if h := UnencryptedHow(d, t); h != "" {
				how = append(how, h)
			} else {
				how = append(how, ColumnLabel(d, t))
			}
		}
		title = "Unencrypted (" + strings.Join(how, "; ") + ")"
	}
	if caveat != "" {
		fmt.Fprintln(w, caveat)
	}
	fmt.Fprintf(w, "%s, %s (%s), %d stream(s)%s: goodput in Mbit/s, median of %s; each cell %s\n",
		title, dir, dirWords(dir), s.Streams, ImpairTitle(&s, cc), s.RepeatText(), strings.Join(labels(d, ts), " | "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, z := range s.Sizes {
		fmt.Fprintf(tw, "%s\t", SizeName(z))
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
					vals = append(vals, cellText(d, matrix.ColumnCell(t, matrix.Cell{Size: z, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc})))
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
	return nil
}

func dirWords(dir matrix.Direction) string {
	if dir == "down" {
		return "server to client"
	}
	return "client to server"
}

// tableHas reports whether a transport has any cell in the table that is not
// "n/a" (tcp has none among the encrypted ones).
func tableHas(d *results.Document, t string, crypto bool, dir matrix.Direction) bool {
	for _, c := range d.Cells {
		if c.ColumnName() == t && c.Crypto == crypto && c.Direction == dir && c.Status != results.StatusNA {
			return true
		}
	}
	return false
}

// cellText is a goodput cell's entry in a table: its median goodput in
// Mbit/s ("~" when wide), or what its status says.
func cellText(d *results.Document, c matrix.Cell) string {
	return FigureText(d, c, func(r *results.CellResult) (float64, bool) { return r.MedianBps / 1e6, true })
}

// WriteNotes prints what the goodput tables' marks mean: the cells that
// are unavailable, n/a or failed, what GSO off meant, what the kquic column
// carries, how the receivers read, and the spread, steal and CPU notes.
func WriteNotes(w io.Writer, d *results.Document) {
	seen := map[string]bool{}
	var notes []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	wide, extra := false, false
	for _, c := range d.Cells {
		switch c.Status {
		case results.StatusUnavailable:
			add(fmt.Sprintf("-     %s is unavailable here: %s", ColumnLabel(d, c.ColumnName()), c.Note))
		case results.StatusNA:
			add(fmt.Sprintf("n/a   %s: %s", ColumnLabel(d, c.ColumnName()), strings.TrimPrefix(c.Note, "n/a: ")))
		case results.StatusFailed:
			add(fmt.Sprintf("FAIL  %s: %s", c.Key, c.Error))
		case results.StatusOK:
			wide = wide || c.WideSpread
			extra = extra || len(c.Samples) > d.Spec.Repeat
			if !c.GSO && c.GSONote != "" {
				add(fmt.Sprintf("no GSO for %s: %s", ColumnLabel(d, c.ColumnName()), c.GSONote))
			}
		}
	}
	for _, c := range d.Cells {
		if c.Status == results.StatusOK && !c.GSO && c.Offloads != "" {
			add("no GSO on the devices: " + c.Offloads[strings.Index(c.Offloads, ";")+2:])
			break
		}
	}
	if t := KquicNote(d); t != "" {
		add("kquic " + t[len("kquic "):])
	}
	if t := d.Spec.ReadSizeText(); t != "" {
		add("read  " + t)
	}
	if extra {
		add(fmt.Sprintf("more  some cells got samples beyond --repeat %d because their spread was wide: sampling until a cell looks narrow is optional stopping, so their spread, and the intervals of ratios and compare taken from them, read narrower than they are: for a figure to quote, measure a fixed number (--repeat N alone)", d.Spec.Repeat))
	}
	if wide {
		add(fmt.Sprintf("~     spread above %.0f%% of the median (the median's %.0f%% interval over the repeats; the range up to 4 samples), after up to --max-repeat samples: the machine is not quiet, or measure with more --time", results.MaxSpread*100, results.SpreadConfidence*100))
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	WriteRunNotes(w, d)
}

// impairTitle says, for a table title, what impairs the link and which
// congestion control the table's cells use ("" when neither is set).
func ImpairTitle(s *matrix.Spec, cc string) string {
	var p []string
	if n := s.Impairment(); !n.IsZero() {
		p = append(p, n.Title())
	}
	if cc != "" {
		p = append(p, "congestion control "+cc+" (quic-go: its own CUBIC)")
	}
	if s.Window > 0 {
		p = append(p, fmt.Sprintf("QUIC window %s", SizeName(s.Window)))
	}
	if len(p) == 0 {
		return ""
	}
	return ", " + strings.Join(p, ", ")
}

// withCC is a copy of the document with only the cells of one congestion
// control, for its own tables.
func withCC(d *results.Document, cc string) *results.Document {
	c := *d
	c.Spec.CC = []string{cc}
	c.Cells = nil
	for _, r := range d.Cells {
		if r.CC == cc {
			c.Cells = append(c.Cells, r)
		}
	}
	return &c
}

// UnencryptedHow says how a column's cells go without encryption, for the
// title of an unencrypted table ("kquic: disable_1rtt_encryption"), naming
// the tool of another driver's column (matrix.DriverSpec.Unencrypted);
// "" for a column with no such cells.
func UnencryptedHow(d *results.Document, col string) string {
	c := matrix.ColumnCell(col, matrix.Cell{})
	how := ""
	switch ds, _ := matrix.DriverSpecOf(c.Driver); {
	case c.Driver != "":
		if ds.Unencrypted != nil {
			how = ds.Unencrypted(c.Transport, d.Tool(c.Transport, c.Driver))
		}
	case col == "kquic":
		how = "disable_1rtt_encryption"
	case col == "tcp":
		how = "plain TCP"
	}
	if how == "" {
		return ""
	}
	return ColumnLabel(d, col) + ": " + how
}

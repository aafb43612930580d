package ratio

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// EmulatedNote is the line under a table measured on an emulated CPU
// (qemu TCG): its goodputs say more about the emulator than the kernel.
const EmulatedNote = "on an emulated CPU only ratios are comparable"

// Cell is one ratio of a Table: this run's, and the published ones beside
// it.
type Cell struct {
	Ratio Interval
	// Missing, when not empty, says why this run has no ratio here (a cell
	// not measured, or an error of Of); the cell then reads "n/a".
	Missing string
	// Refs are the published ratios, one per Table.RefNames.
	Refs []Ref
}

// Ref is a published ratio, where OK (the source has the figures).
type Ref struct {
	Value float64
	OK    bool
}

// Row is one line of a Table: an MTU with GSO on or off (see RowLabel).
type Row struct {
	Label string
	Cells []Cell
}

// Table is a ratio table: rows are MTU and GSO settings, columns sizes.
type Table struct {
	// Title names the ratio, as "kquic / ktls".
	Title string
	// Columns head the size columns, as "1 KiB".
	Columns []string
	// RefNames head the published figures' columns ("README 2024"), one
	// after every size column each; none when no cell has a reference.
	RefNames []string
	Rows     []Row
	// Emulated adds EmulatedNote under the table.
	Emulated bool
}

// RowLabel is the label of the row for mtu with GSO on or off.
func RowLabel(mtu int, gso bool) string {
	if gso {
		return fmt.Sprintf("mtu %d", mtu)
	}
	return fmt.Sprintf("mtu %d, GSO off", mtu)
}

// num formats a ratio with two decimals (three significant digits outside
// [0.01, 100)).
func num(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case x == 0 || (x >= 0.01 && x < 100):
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// String formats the interval as "0.47 [0.44, 0.50]", or "0.47 [no
// interval: n=1]" when a cell has one sample.
func (i Interval) String() string {
	if !i.Bounded() {
		return fmt.Sprintf("%s [no interval: n=%d/%d]", num(i.Center), i.N, i.M)
	}
	return fmt.Sprintf("%s [%s, %s]", num(i.Center), num(i.Lo), num(i.Hi))
}

// Text is the cell as the table prints it: the ratio and its interval,
// or "n/a".
func (c Cell) Text() string {
	if c.Missing != "" {
		return "n/a"
	}
	return c.Ratio.String()
}

// RefTexts are the published ratios beside it, "-" where a source has
// none, one per Table.RefNames.
func (c Cell) RefTexts(t Table) []string {
	out := make([]string, len(t.RefNames))
	for i := range out {
		out[i] = "-"
		if i < len(c.Refs) && c.Refs[i].OK {
			out[i] = num(c.Refs[i].Value)
		}
	}
	return out
}

// WriteText writes the table as aligned text: the title, a header of
// sizes (each followed by the references' columns, RefNames),
// a line per row, then why each n/a cell is missing, and EmulatedNote.
func (t Table) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s (95%% intervals)\n", t.Title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{""}
	for _, c := range t.Columns {
		head = append(head, c)
		head = append(head, t.RefNames...)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var notes []string
	for _, r := range t.Rows {
		line := []string{r.Label}
		for i, c := range r.Cells {
			line = append(line, c.Text())
			line = append(line, c.RefTexts(t)...)
			if c.Missing != "" && i < len(t.Columns) {
				notes = append(notes, fmt.Sprintf("%s, %s: n/a: %s", r.Label, t.Columns[i], c.Missing))
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if t.Emulated {
		fmt.Fprintln(w, EmulatedNote)
	}
	return nil
}

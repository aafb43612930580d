package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/ratio"
	"kquic.dev/bench/reference"
	"kquic.dev/bench/results"
)

// A ratioPair is one ratio the module README's readers compute: a
// numerator column over a denominator column in the encrypted or the
// unencrypted table, with the published tables it sits beside (refNames).
type ratioPair struct {
	num, den string // transports: the numerator's kernel figure (C) is taken where the document has it
	crypto   bool
	refs     []*reference.Table
}

// readmePairs are the README's two tables' ratios: QUIC over kTLS, and
// QUIC without 1-RTT encryption over TCP.
var readmePairs = []ratioPair{
	{num: "kquic", den: "ktls", crypto: true, refs: []*reference.Table{&reference.ReadmeKTLS, &reference.CoverV9KTLS}},
	{num: "kquic", den: "tcp", crypto: false, refs: []*reference.Table{&reference.ReadmeTCP, &reference.CoverV9TCP}},
}

// refNames head the published ratios' columns, one per ratioPair.refs.
var refNames = []string{"README 2024", "v9 2026"}

// published are the ratios of the pair's references at mtu and size: of
// the pair (f is Table.Ratio with gso) or of GSO (gsoEffect).
func published(p ratioPair, f func(t *reference.Table) (float64, bool)) []ratio.Ref {
	var out []ratio.Ref
	for _, t := range p.refs {
		v, ok := f(t)
		out = append(out, ratio.Ref{Value: v, OK: ok})
	}
	return out
}

// RatioTables are the ratios the module README's readers compute from a
// document of the default mode, upwards: kquic / ktls (encrypted) and kquic / tcp
// (unencrypted), rows per MTU with GSO on and off, columns per size, each
// with its 95% interval from the cells' samples (package bench/ratio) and
// the published ratios beside it (package bench/reference: the README of
// 2024 and the v9 cover letter of 2026-02); then
// what GSO off does to ktls and tcp (their no-GSO cells over their GSO
// ones). A side's figure is the native driver's (the kernel's, "(C)")
// where the document measured it, else this process's, and the title says
// which. A table whose two columns were not both measured is left out.
func RatioTables(d *results.Document) []ratio.Table {
	if !d.Spec.Mode.IsDefault() || !hasDirection(d, matrix.Up) {
		return nil
	}
	var out []ratio.Table
	for _, p := range readmePairs {
		num, den := pickColumn(d, p.num, p.crypto), pickColumn(d, p.den, p.crypto)
		if num == "" || den == "" {
			continue
		}
		t := ratio.Table{Title: fmt.Sprintf("%s / %s, %s", num, den, encryptedWord(p.crypto)), RefNames: refNames,
			Emulated: d.Env.Machine.Kind == results.MachineEmulated}
		for _, mtu := range d.Spec.MTUs {
			for _, gso := range d.Spec.GSO {
				row := ratio.Row{Label: ratio.RowLabel(mtu, gso)}
				for _, size := range d.Spec.Sizes {
					c := ratioCell(d, num, den, baseCell(d, size, mtu, gso, p.crypto), baseCell(d, size, mtu, gso, p.crypto))
					c.Refs = published(p, func(t *reference.Table) (float64, bool) { return t.Ratio(mtu, size, gso) })
					row.Cells = append(row.Cells, c)
				}
				t.Rows = append(t.Rows, row)
			}
		}
		out = append(out, withColumns(t, d))
	}
	if len(d.Spec.GSO) < 2 {
		return out
	}
	for _, p := range readmePairs {
		col := pickColumn(d, p.den, p.crypto)
		if col == "" {
			continue
		}
		t := ratio.Table{Title: fmt.Sprintf("%s, GSO off / GSO on, %s", col, encryptedWord(p.crypto)), RefNames: refNames,
			Emulated: d.Env.Machine.Kind == results.MachineEmulated}
		for _, mtu := range d.Spec.MTUs {
			row := ratio.Row{Label: fmt.Sprintf("mtu %d", mtu)}
			for _, size := range d.Spec.Sizes {
				c := ratioCell(d, col, col, baseCell(d, size, mtu, false, p.crypto), baseCell(d, size, mtu, true, p.crypto))
				c.Refs = published(p, func(t *reference.Table) (float64, bool) { return t.GSOEffect(mtu, size) })
				row.Cells = append(row.Cells, c)
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, withColumns(t, d))
	}
	return out
}

// WriteRatios writes RatioTables, each after a blank line, with a line on
// what the numerator's figure is when it is the Go bindings'.
func WriteRatios(w io.Writer, d *results.Document) error {
	for _, t := range RatioTables(d) {
		fmt.Fprintln(w)
		if err := t.WriteText(w); err != nil {
			return err
		}
		if strings.HasPrefix(t.Title, "kquic /") {
			fmt.Fprintln(w, "kquic here is this process's figure through the Go bindings, not the kernel's alone: --driver go,native with --iperf-quic gives kquic(C)")
		}
	}
	return nil
}

// A RatioChange is one ratio of RatioTables compared between two runs.
type RatioChange struct {
	// Table is the table's title, Row its row's label ("mtu 1500, gso
	// on"), Size the message size.
	Table, Row string
	Size       int
	ratio.Change
}

// String is the change as WriteRatioChanges prints it: "kquic(C) / ktls,
// encrypted, mtu 1500, 64 KiB: 0.41 -> 0.47 (x1.15 [1.05, 1.26], p =
// 0.004)", or "(~, p = 0.6)" when it is not significant.
func (c RatioChange) String() string {
	mark := "~"
	if c.Significant {
		mark = fmt.Sprintf("x%.2f [%.2f, %.2f]", c.Factor.Center, c.Factor.Lo, c.Factor.Hi)
	}
	return fmt.Sprintf("%s, %s, %s: %.2f -> %.2f (%s, p = %.3f)", c.Table, c.Row, SizeName(c.Size), c.A.Center, c.B.Center, mark, c.P)
}

// RatioChanges compares every ratio of run a's RatioTables that run b has
// too (the same table, MTU, GSO setting and size, whatever else either
// measured) with ratio.Compare at alpha, in a's table order.
func RatioChanges(a, b *results.Document, alpha float64) []RatioChange {
	var out []RatioChange
	tb := RatioTables(b)
	for _, t := range RatioTables(a) {
		if !slices.ContainsFunc(tb, func(u ratio.Table) bool { return u.Title == t.Title }) {
			continue
		}
		for ri, row := range t.Rows {
			mtu, gso, ok := rowSetting(a, t, ri)
			if !ok {
				continue
			}
			for ci, size := range a.Spec.Sizes {
				if ci >= len(row.Cells) {
					break
				}
				ca, okA := tableCells(a, t.Title, size, mtu, gso)
				cb, okB := tableCells(b, t.Title, size, mtu, gso)
				if !okA || !okB {
					continue
				}
				ch, err := ratio.Compare(ca, cb, alpha)
				if err != nil {
					continue
				}
				out = append(out, RatioChange{Table: t.Title, Row: row.Label, Size: size, Change: ch})
			}
		}
	}
	return out
}

// WriteRatioChanges writes RatioChanges, significant changes first; "~"
// marks a change that is not significant.
func WriteRatioChanges(w io.Writer, a, b *results.Document, alpha float64) error {
	var sig, rest []string
	for _, c := range RatioChanges(a, b, alpha) {
		if c.Significant {
			sig = append(sig, c.String())
		} else {
			rest = append(rest, c.String())
		}
	}
	if len(sig)+len(rest) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nratios, B against A (Welch's test on the log scale; ~: not significant):")
	for _, l := range append(sig, rest...) {
		if _, err := fmt.Fprintln(w, "  "+l); err != nil {
			return err
		}
	}
	return nil
}

// rowSetting is the MTU and GSO setting of row ri of table t of
// RatioTables(d): a pair table has a row per MTU and GSO setting, a GSO
// table (GSO off against on) one per MTU.
func rowSetting(d *results.Document, t ratio.Table, ri int) (mtu int, gso, ok bool) {
	head, _, _ := strings.Cut(t.Title, ", ")
	if strings.Contains(head, " / ") {
		n := len(d.Spec.GSO)
		if n == 0 || ri/n >= len(d.Spec.MTUs) {
			return 0, false, false
		}
		return d.Spec.MTUs[ri/n], d.Spec.GSO[ri%n], true
	}
	if ri >= len(d.Spec.MTUs) {
		return 0, false, false
	}
	return d.Spec.MTUs[ri], false, true
}

// tableCells are the samples behind the ratio of the table titled title
// (of RatioTables) at size, mtu and gso, found in document d.
func tableCells(d *results.Document, title string, size, mtu int, gso bool) (ratio.Cells, bool) {
	crypto := !strings.HasSuffix(title, encryptedWord(false))
	head, _, _ := strings.Cut(title, ", ")
	if num, den, ok := strings.Cut(head, " / "); ok {
		return cellsOf(d, num, den, baseCell(d, size, mtu, gso, crypto), baseCell(d, size, mtu, gso, crypto))
	}
	return cellsOf(d, head, head, baseCell(d, size, mtu, false, crypto), baseCell(d, size, mtu, true, crypto))
}

func encryptedWord(crypto bool) string {
	if crypto {
		return "encrypted"
	}
	return "unencrypted"
}

// hasDirection reports whether the spec measured direction dir.
func hasDirection(d *results.Document, dir matrix.Direction) bool {
	for _, x := range d.Spec.Directions {
		if x == dir {
			return true
		}
	}
	return false
}

// baseCell is the upward cell of the spec at size, mtu, gso and crypto,
// without its transport.
func baseCell(d *results.Document, size, mtu int, gso, crypto bool) matrix.Cell {
	return matrix.Cell{Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: matrix.Up, Streams: d.Spec.Streams,
		Netem: d.Spec.Netem, CC: d.Spec.CCAxis()[0]}
}

// pickColumn is the column a ratio takes for a transport: its kernel
// driver's figure ("kquic(C)", matrix.DriverSpec.Kernel) where the
// document measured one with this encryption, else this process's
// ("kquic") where it measured that, else "".
func pickColumn(d *results.Document, transport string, crypto bool) string {
	found := ""
	for _, c := range d.Cells {
		if c.Transport != transport || c.Crypto != crypto || c.Direction != matrix.Up || c.Status != results.StatusOK {
			continue
		}
		if c.Driver != "" && c.Driver == matrix.KernelDriver() {
			return c.ColumnName()
		}
		found = transport
	}
	return found
}

// ratioCell is the ratio of column num's cell at base over column den's
// cell at base2, or why there is none.
func ratioCell(d *results.Document, num, den string, base, base2 matrix.Cell) ratio.Cell {
	cs, ok := cellsOf(d, num, den, base, base2)
	if !ok {
		return ratio.Cell{Missing: fmt.Sprintf("%s or %s not measured", num, den)}
	}
	iv, err := ratio.Of(cs.Num, cs.Den)
	if err != nil {
		return ratio.Cell{Missing: err.Error()}
	}
	return ratio.Cell{Ratio: iv}
}

// cellsOf are the goodput samples of column num at base and column den at
// base2; false when either cell was not measured.
func cellsOf(d *results.Document, num, den string, base, base2 matrix.Cell) (ratio.Cells, bool) {
	n, okN := d.Lookup(matrix.ColumnCell(num, base))
	m, okD := d.Lookup(matrix.ColumnCell(den, base2))
	if !okN || !okD || n.Status != results.StatusOK || m.Status != results.StatusOK {
		return ratio.Cells{}, false
	}
	return ratio.Cells{Num: bpsOf(n), Den: bpsOf(m)}, true
}

func bpsOf(c *results.CellResult) []float64 {
	var v []float64
	for _, s := range c.Samples {
		v = append(v, s.Bps)
	}
	return v
}

// withColumns heads the table's columns with the spec's sizes.
func withColumns(t ratio.Table, d *results.Document) ratio.Table {
	for _, z := range d.Spec.Sizes {
		t.Columns = append(t.Columns, SizeName(z))
	}
	return t
}

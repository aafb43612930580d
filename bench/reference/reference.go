package reference

// Source is where a table's figures were published.
type Source struct {
	// Title names the document.
	Title string
	// URL is where to read it.
	URL string
	// Commit is the git commit of a repository file (empty for a mail).
	Commit string
	// Date is the publication or commit date, YYYY-MM-DD.
	Date string
	// Setup is how the figures were measured, as the source says.
	Setup string
}

// Row is one MTU's figures in Gbit/s, one per size of the table.
type Row struct {
	MTU int
	// GSO is false for a row measured with GSO off on the denominator's
	// transport (kTLS or TCP); such a row has no numerator figures.
	GSO bool
	// Num and Den are the numerator's (QUIC) and denominator's figures.
	Num, Den []float64
}

// Table is one published table: Num | Den at each size and MTU.
type Table struct {
	Source Source
	// Num and Den name the two columns (QUIC and kTLS, or QUIC without
	// 1-RTT encryption and TCP).
	Num, Den string
	// Sizes are the message sizes (iperf3 -l) in bytes.
	Sizes []int
	Rows  []Row
}

// row is the row for mtu and gso, or nil.
func (t *Table) row(mtu int, gso bool) *Row {
	for i := range t.Rows {
		if t.Rows[i].MTU == mtu && t.Rows[i].GSO == gso {
			return &t.Rows[i]
		}
	}
	return nil
}

// column is the index of size in t.Sizes, or -1.
func (t *Table) column(size int) int {
	for i, s := range t.Sizes {
		if s == size {
			return i
		}
	}
	return -1
}

// Figures are the numerator's and denominator's Gbit/s at mtu and size,
// the denominator with GSO on or off. With gso false the numerator is the
// GSO row's (QUIC has no GSO to turn off). ok is false where the table has
// no such figure.
func (t *Table) Figures(mtu, size int, gso bool) (num, den float64, ok bool) {
	c := t.column(size)
	on, r := t.row(mtu, true), t.row(mtu, gso)
	if c < 0 || on == nil || r == nil {
		return 0, 0, false
	}
	return on.Num[c], r.Den[c], true
}

// Ratio is the published Num/Den at mtu and size, the denominator with GSO
// on or off: the figure readers quote ("QUIC at about half of kTLS").
func (t *Table) Ratio(mtu, size int, gso bool) (float64, bool) {
	num, den, ok := t.Figures(mtu, size, gso)
	if !ok {
		return 0, false
	}
	return num / den, true
}

// GSOEffect is the denominator's figure with GSO off over with GSO on at
// mtu and size (what GSO gives kTLS or TCP).
func (t *Table) GSOEffect(mtu, size int) (float64, bool) {
	c := t.column(size)
	on, off := t.row(mtu, true), t.row(mtu, false)
	if c < 0 || on == nil || off == nil {
		return 0, false
	}
	return off.Den[c] / on.Den[c], true
}

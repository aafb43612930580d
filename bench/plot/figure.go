package plot

import (
	"fmt"
	"math"
	"sort"

	"kquic.dev/bench/matrix"
)

// Figure is one image: a grid of panels sharing a title.
type Figure struct {
	// Name is the figure's file stem ("goodput-up", "change-goodput-up").
	Name string
	// Title is drawn above the panels.
	Title string
	// Cols is the number of panels across (the rows follow).
	Cols int
	// Panels are in row order.
	Panels []Panel
}

// Panel is one plot: its series over message size.
type Panel struct {
	Title  string
	XLabel string
	YLabel string
	// LogX puts the x axis (message size) on a logarithmic scale.
	LogX bool
	// WholeX labels a linear x axis at the points' x only (connection
	// counts).
	WholeX bool `json:",omitempty"`
	// Series are drawn in order; each has one entry in the legend.
	Series []Series
}

// Series is one line of a panel: one transport measured by one driver
// ("kquic" by this process's Go transports, "kquic(C)" by the native C
// tools), as the tables have a column each.
type Series struct {
	Label string
	// Index is the transport's place in the run; it picks the series'
	// colour and glyph, the same in every panel (a transport's native
	// series shares its colour).
	Index int
	// Native marks the series of a driver other than this process's (the
	// native driver's C tools); it is drawn dashed.
	Native bool
	Points []Point
}

// Point is one cell: Y at X, with an error bar from Lo to Hi (equal to Y
// where there is none).
type Point struct {
	X, Y   float64
	Lo, Hi float64
	// Cell is the key of the cell the point comes from.
	Cell string
	// Marked points are drawn with a filled glyph (in a change figure:
	// the change is significant).
	Marked bool
}

// Rows is the number of panel rows.
func (f Figure) Rows() int {
	if f.Cols <= 0 {
		return len(f.Panels)
	}
	return (len(f.Panels) + f.Cols - 1) / f.Cols
}

// Cells lists the cell keys the figure plots, in order.
func (f Figure) Cells() []string {
	var out []string
	for _, p := range f.Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				out = append(out, pt.Cell)
			}
		}
	}
	return out
}

// group is the part of a cell that selects its panel.
type group struct {
	MTU    int
	GSO    bool
	Crypto bool
}

func (g group) title(withCrypto bool) string {
	s := fmt.Sprintf("MTU %d, GSO %s", g.MTU, onOff(g.GSO))
	if withCrypto {
		if g.Crypto {
			s += ", encrypted"
		} else {
			s += ", unencrypted"
		}
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// figureOf lays out the points of one direction (and stream count) of a
// document as panels per MTU × GSO (× encryption when both appear), series
// per transport and driver in the spec's order (a native cell is its own
// series, "kquic(C)"). value gives a cell's point; ok false
// leaves the cell out.
func figureOf(name, title, ylabel string, spec matrix.Spec, cells []matrix.Cell, value func(matrix.Cell) (Point, bool)) (Figure, bool) {
	cryptos := map[bool]bool{}
	panels := map[group]map[string][]Point{}
	for _, c := range cells {
		pt, ok := value(c)
		if !ok || c.Size <= 0 || !finite(pt.Y) {
			continue // a hand-edited cell: no place on a logarithmic axis
		}
		if !finite(pt.Lo) || !finite(pt.Hi) || pt.Lo > pt.Y || pt.Hi < pt.Y {
			pt.Lo, pt.Hi = pt.Y, pt.Y
		}
		pt.X = float64(c.Size)
		g := group{c.MTU, c.GSO, c.Crypto}
		if panels[g] == nil {
			panels[g] = map[string][]Point{}
		}
		panels[g][c.ColumnName()] = append(panels[g][c.ColumnName()], pt)
		cryptos[c.Crypto] = true
	}
	if len(panels) == 0 {
		return Figure{}, false
	}
	var groups []group
	for g := range panels {
		groups = append(groups, g)
	}
	// Rows: MTU; across: GSO on, off, then encrypted before unencrypted.
	sort.Slice(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		switch {
		case a.MTU != b.MTU:
			return a.MTU < b.MTU
		case a.Crypto != b.Crypto:
			return a.Crypto
		}
		return a.GSO && !b.GSO
	})
	cols := map[int]int{}
	for _, g := range groups {
		cols[g.MTU]++
	}
	f := Figure{Name: name, Title: title}
	for _, n := range cols {
		f.Cols = max(f.Cols, n)
	}
	order := columnOrder(spec, cells)
	for _, g := range groups {
		p := Panel{Title: g.title(len(cryptos) > 1), XLabel: "message size", YLabel: ylabel, LogX: true}
		for _, col := range order {
			pts := panels[g][col.name]
			if len(pts) == 0 {
				continue
			}
			sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
			p.Series = append(p.Series, Series{Label: col.name, Index: col.index, Native: col.native, Points: pts})
		}
		f.Panels = append(f.Panels, p)
	}
	// Fill each MTU's row to the width, so rows line up by column.
	if len(cols) > 1 {
		var padded []Panel
		i := 0
		for _, mtu := range sortedKeys(cols) {
			for k := 0; k < f.Cols; k++ {
				if k < cols[mtu] {
					padded = append(padded, f.Panels[i])
					i++
				} else {
					padded = append(padded, Panel{})
				}
			}
		}
		f.Panels = padded
	}
	return f, true
}

func sortedKeys(m map[int]int) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// column is a series of a figure: a transport and driver, as the tables'
// columns ("kquic", "kquic(C)").
type column struct {
	name   string
	index  int // the transport's place: its colour
	native bool
}

// columnOrder is the spec's transports (then any others the cells name),
// each followed by its other drivers' columns where the cells have them.
func columnOrder(spec matrix.Spec, cells []matrix.Cell) []column {
	var transports []string
	seen := map[string]bool{}
	for _, t := range spec.Transports {
		if !seen[t] {
			seen[t] = true
			transports = append(transports, t)
		}
	}
	driven := map[matrix.Cell]bool{} // transport and driver
	for _, c := range cells {
		if !seen[c.Transport] {
			seen[c.Transport] = true
			transports = append(transports, c.Transport)
		}
		if c.Driver != "" {
			driven[matrix.Cell{Transport: c.Transport, Driver: c.Driver}] = true
		}
	}
	var out []column
	for i, t := range transports {
		out = append(out, column{name: matrix.Cell{Transport: t}.ColumnName(), index: i})
		for _, d := range matrix.Drivers()[1:] {
			if c := (matrix.Cell{Transport: t, Driver: d}); driven[c] {
				out = append(out, column{name: c.ColumnName(), index: i, native: true})
			}
		}
	}
	return out
}

// span is the median and extremes of xs (NaN for none).
func span(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	n := len(v)
	med = v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return med, v[0], v[n-1]
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

package flame

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// DiffSVG draws a differential flamegraph of B against A: the frames laid
// out by B's samples (A's with Options.Negate), and each coloured by how
// its share of the samples changed, A scaled to B's total first (as
// difffolded.pl -n): red where B spends more, blue where less, white where
// the same, the deepest colour for the largest change. A frame's tooltip
// gives both counts, both shares and the change in points.
func DiffSVG(w io.Writer, a, b Folded, o Options) error {
	o.defaults(true)
	root := buildTree(a, b)
	if root.a == 0 || root.b == 0 {
		return fmt.Errorf("differential flamegraph: profile %s has no samples", map[bool]string{true: "A", false: "B"}[root.a == 0])
	}
	ta, tb := float64(root.a), float64(root.b)
	// delta is the frame's change in share of the samples, in B's samples.
	delta := func(n *node) float64 { return float64(n.b) - float64(n.a)*tb/ta }
	var maxDelta float64
	var walk func(*node)
	walk = func(n *node) {
		maxDelta = max(maxDelta, math.Abs(delta(n)))
		for _, c := range n.kids {
			walk(c)
		}
	}
	walk(root)
	total := root.b
	if o.Negate {
		total = root.a
	}
	if o.Subtitle == "" {
		o.Subtitle = fmt.Sprintf("A %d samples, B %d samples; widths from %s; red: B spends more, blue: less (A scaled to B's total)",
			root.a, root.b, map[bool]string{false: "B", true: "A"}[o.Negate])
	}
	d := &drawing{o: o, total: float64(total)}
	d.width = func(n *node) int64 {
		if o.Negate {
			return n.a
		}
		return n.b
	}
	d.title = func(n *node) string {
		pa, pb := 100*float64(n.a)/ta, 100*float64(n.b)/tb
		return fmt.Sprintf("%s (A %d samples, %s%%; B %d samples, %s%%; %s points)",
			n.name, n.a, fmtPct(pa), n.b, fmtPct(pb), signed(pb-pa))
	}
	d.fill = func(n *node) string { return diffColour(delta(n), maxDelta) }
	return d.draw(w, root)
}

// diffColour is red for growth, blue for shrinking, white for none, as
// flamegraph.pl colours a differential graph.
func diffColour(delta, maxDelta float64) string {
	if maxDelta == 0 || delta == 0 {
		return "rgb(250,250,250)"
	}
	c := 210 * (maxDelta - math.Abs(delta)) / maxDelta
	if delta > 0 {
		return rgb(255, c, c)
	}
	return rgb(c, c, 255)
}

func fmtPct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func signed(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	if v >= 0 && s != "-0.00" {
		return "+" + s
	}
	if s == "-0.00" {
		return "+0.00"
	}
	return s
}

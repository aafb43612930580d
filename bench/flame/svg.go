package flame

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options configures a flamegraph's drawing. The zero value draws a
// 1200-pixel-wide graph.
type Options struct {
	// Title is drawn at the top (default "Flame Graph" or "Differential
	// Flame Graph").
	Title string
	// Subtitle is drawn under the title, if given.
	Subtitle string
	// Width is the image's width in pixels (default 1200).
	Width int
	// FrameHeight is a frame's height in pixels (default 16).
	FrameHeight int
	// MinWidth leaves out frames narrower than this many pixels, and what
	// is above them (default 0.1, as flamegraph.pl's --minwidth).
	MinWidth float64
	// Highlight, if set, draws the frames whose names start with it in
	// magenta (e.g. "quic_" for the QUIC module's functions).
	Highlight string
	// Negate, for DiffSVG, takes the widths from A instead of B, so that
	// what B no longer runs shows (blue). Red still means B spends more.
	Negate bool
}

func (o *Options) defaults(diff bool) {
	if o.Title == "" {
		o.Title = "Flame Graph"
		if diff {
			o.Title = "Differential Flame Graph"
		}
	}
	if o.Width <= 0 {
		o.Width = 1200
	}
	if o.FrameHeight <= 0 {
		o.FrameHeight = 16
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.1
	}
}

// Layout constants, in pixels.
const (
	padX      = 10
	padTop    = 60 // title and subtitle
	padBottom = 20
	fontSize  = 12
	charWidth = 0.59 * fontSize // Verdana's average
)

// SVG draws the profile as a flamegraph: the root ("all") at the bottom,
// each frame above its caller, as wide as its share of the samples.
func SVG(w io.Writer, f Folded, o Options) error {
	o.defaults(false)
	root := buildTree(nil, f)
	if root.b == 0 {
		return fmt.Errorf("flamegraph: the profile has no samples")
	}
	if o.Subtitle == "" {
		o.Subtitle = fmt.Sprintf("%d samples", root.b)
	}
	d := &drawing{o: o, total: float64(root.b)}
	d.width = func(n *node) int64 { return n.b }
	d.title = func(n *node) string {
		return fmt.Sprintf("%s (%d samples, %s%%)", n.name, n.b, pct(n.b, root.b))
	}
	d.fill = func(n *node) string { return hotColour(n.name, o.Highlight) }
	return d.draw(w, root)
}

// drawing lays out and writes one flamegraph.
type drawing struct {
	o     Options
	total float64
	width func(*node) int64
	title func(*node) string
	fill  func(*node) string
}

func (d *drawing) draw(w io.Writer, root *node) error {
	bw := bufio.NewWriter(w)
	depth := root.depth()
	fh := d.o.FrameHeight
	height := padTop + depth*fh + padBottom
	scale := float64(d.o.Width-2*padX) / d.total
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">
<style>
text { font-family: Verdana, sans-serif; font-size: %dpx; fill: #000; }
.title { font-size: 17px; text-anchor: middle; }
.subtitle { fill: #555; text-anchor: middle; }
g.f:hover rect { stroke: #000; stroke-width: 0.5; }
</style>
<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f8"/>
`, d.o.Width, height, d.o.Width, height, fontSize, d.o.Width, height)
	fmt.Fprintf(bw, "<text class=\"title\" x=\"%d\" y=\"24\">%s</text>\n", d.o.Width/2, esc(d.o.Title))
	fmt.Fprintf(bw, "<text class=\"subtitle\" x=\"%d\" y=\"44\">%s</text>\n", d.o.Width/2, esc(d.o.Subtitle))
	var walk func(n *node, x float64, level int)
	walk = func(n *node, x float64, level int) {
		wpx := float64(d.width(n)) * scale
		if wpx < d.o.MinWidth {
			return
		}
		y := height - padBottom - (level+1)*fh
		fmt.Fprintf(bw, "<g class=\"f\"><title>%s</title><rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
			esc(d.title(n)), num(x), y, num(wpx), fh-1, d.fill(n))
		if label := fit(n.name, wpx); label != "" {
			fmt.Fprintf(bw, "<text x=\"%s\" y=\"%d\">%s</text>", num(x+3), y+fh-4, esc(label))
		}
		bw.WriteString("</g>\n")
		cx := x
		for _, c := range n.sorted() {
			walk(c, cx, level+1)
			cx += float64(d.width(c)) * scale
		}
	}
	walk(root, padX, 0)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// fit is the frame's label cut to the box's width ("" when too narrow).
func fit(name string, wpx float64) string {
	chars := int((wpx - 6) / charWidth)
	if chars < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= chars {
		return name
	}
	r := []rune(name)
	return string(r[:chars-2]) + ".."
}

// esc escapes s for XML text and attributes; characters XML cannot hold
// become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func pct(n, total int64) string {
	if total == 0 {
		return "0"
	}
	return strconv.FormatFloat(100*float64(n)/float64(total), 'f', 2, 64)
}

// nameHash gives three numbers in [0,1) from a frame's name, so that a
// function has the same colour in every graph.
func nameHash(name string) (float64, float64, float64) {
	h := fnv.New64a()
	h.Write([]byte(name))
	v := h.Sum64()
	return float64(v&0xffff) / 65536, float64(v>>16&0xffff) / 65536, float64(v>>32&0xffff) / 65536
}

// hotColour is flamegraph.pl's palette: red to yellow for user code,
// orange for the kernel ("_[k]" frames), magenta for highlighted ones.
func hotColour(name, highlight string) string {
	v1, v2, v3 := nameHash(name)
	switch {
	case highlight != "" && strings.HasPrefix(name, highlight):
		return rgb(200+55*v1, 60+60*v2, 200+55*v3)
	case strings.HasSuffix(name, "_[k]"):
		return rgb(230+25*v1, 130+60*v2, 20+40*v3)
	default:
		return rgb(205+50*v3, 230*v1, 55*v2)
	}
}

func rgb(r, g, b float64) string {
	return fmt.Sprintf("rgb(%d,%d,%d)", int(r), int(g), int(b))
}

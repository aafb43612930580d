package flame

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// frame is one drawn box, read back from the SVG.
type frame struct {
	title    string
	x, width float64
	y        int
	fill     string
	label    string
}

// frames parses an SVG as an XML document (so it must be one) and returns
// its boxes by name (the title up to " (").
func frames(t *testing.T, svg []byte) map[string]frame {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	out := map[string]frame{}
	var cur *frame
	var inTitle, inText bool
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "g":
				cur = &frame{}
			case "title":
				inTitle = cur != nil
			case "text":
				inText = cur != nil
			case "rect":
				if cur == nil {
					continue
				}
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "x":
						cur.x, _ = strconv.ParseFloat(a.Value, 64)
					case "width":
						cur.width, _ = strconv.ParseFloat(a.Value, 64)
					case "y":
						cur.y, _ = strconv.Atoi(a.Value)
					case "fill":
						cur.fill = a.Value
					}
				}
			}
		case xml.CharData:
			if inTitle {
				cur.title += string(e)
			}
			if inText {
				cur.label += string(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "title":
				inTitle = false
			case "text":
				inText = false
			case "g":
				name, _, _ := strings.Cut(cur.title, " (")
				if _, dup := out[name]; dup {
					t.Fatalf("two frames named %q", name)
				}
				out[name] = *cur
				cur = nil
			}
		}
	}
	return out
}

func render(t *testing.T, f Folded, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, f, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSVGWidths(t *testing.T) {
	f := Folded{"main;a;b": 30, "main;a;c": 10, "idle": 60, "main;a": 0}
	svg := render(t, f, Options{Width: 1020}) // 1000 pixels for 100 samples
	fr := frames(t, svg)
	want := map[string]struct {
		n      int64
		width  float64
		parent string
	}{
		"all": {100, 1000, ""}, "idle": {60, 600, "all"}, "main": {40, 400, "all"},
		"a": {40, 400, "main"}, "b": {30, 300, "a"}, "c": {10, 100, "a"},
	}
	if len(fr) != len(want) {
		t.Errorf("%d frames drawn, want %d: %v", len(fr), len(want), fr)
	}
	for name, w := range want {
		g, ok := fr[name]
		if !ok {
			t.Errorf("frame %s not drawn", name)
			continue
		}
		title := fmt.Sprintf("%s (%d samples, %.2f%%)", name, w.n, float64(w.n))
		if g.title != title {
			t.Errorf("frame %s: title %q, want %q", name, g.title, title)
		}
		if g.width != w.width {
			t.Errorf("frame %s: width %.2f, want %.2f", name, g.width, w.width)
		}
		if w.parent != "" {
			p := fr[w.parent]
			if g.y != p.y-16 || g.x < p.x || g.x+g.width > p.x+p.width+0.01 {
				t.Errorf("frame %s (x %.2f, w %.2f, y %d) is not above its caller %s (x %.2f, w %.2f, y %d)",
					name, g.x, g.width, g.y, w.parent, p.x, p.width, p.y)
			}
		}
	}
	// Siblings side by side in name order: b then c.
	if fr["c"].x != fr["b"].x+fr["b"].width {
		t.Errorf("c at %.2f, want right after b (%.2f+%.2f)", fr["c"].x, fr["b"].x, fr["b"].width)
	}
	if !strings.Contains(string(svg), ">100 samples<") {
		t.Error("the subtitle does not give the total")
	}
	// The same profile, built in another order, draws the same bytes.
	g := Folded{}
	for _, s := range []string{"idle", "main;a;c", "main;a;b"} {
		g[s] = f[s]
	}
	if !bytes.Equal(svg, render(t, g, Options{Width: 1020})) {
		t.Error("the same profile drew different SVGs")
	}
}

func TestSVGMinWidth(t *testing.T) {
	f := Folded{"big": 100000, "tiny;above": 1}
	fr := frames(t, render(t, f, Options{}))
	if _, ok := fr["tiny"]; ok {
		t.Error("a frame of 0.01 pixels was drawn")
	}
	if _, ok := fr["above"]; ok {
		t.Error("a frame above a left-out one was drawn")
	}
	if fr["all"].title != "all (100001 samples, 100.00%)" {
		t.Errorf("all: %q: the left-out frames must still count", fr["all"].title)
	}
}

func TestSVGEscaping(t *testing.T) {
	odd := []string{
		`operator<<(std::ostream&, "x")`,
		`a'b>c`,
		"ctl\x01char",
		"<script>alert(1)</script>",
		"ünïcødé→",
	}
	f := Folded{}
	for i, o := range odd {
		f.Add([]string{"root", o}, int64(10+i))
	}
	svg := render(t, f, Options{Title: `A & B <t>`})
	fr := frames(t, svg) // fails if the SVG is not well-formed
	for _, o := range odd {
		want := strings.ToValidUTF8(o, "")
		if o == "ctl\x01char" {
			want = "ctl\uFFFDchar" // XML cannot hold U+0001
		}
		g, ok := fr[want]
		if !ok {
			t.Errorf("frame %q not found among %v", want, fr)
			continue
		}
		if g.label != want && !strings.HasSuffix(g.label, "..") {
			t.Errorf("frame %q labelled %q", want, g.label)
		}
	}
	if strings.Contains(string(svg), "<script>") {
		t.Error("a frame name made an element")
	}
	if !strings.Contains(string(svg), "A &amp; B &lt;t&gt;") {
		t.Error("the title is not escaped")
	}
}

func TestSVGLabelFit(t *testing.T) {
	long := strings.Repeat("x", 500)
	fr := frames(t, render(t, Folded{long: 1, "short": 1}, Options{Width: 220}))
	g := fr[long]
	if !strings.HasSuffix(g.label, "..") || float64(len(g.label))*charWidth > g.width {
		t.Errorf("label %q (%d chars) does not fit %.2f pixels", g.label, len(g.label), g.width)
	}
	if fr["short"].label != "short" {
		t.Errorf("short label %q", fr["short"].label)
	}
}

func TestSVGEmpty(t *testing.T) {
	if err := SVG(io.Discard, Folded{}, Options{}); err == nil {
		t.Error("an empty profile drew a graph")
	}
}

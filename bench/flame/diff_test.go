package flame

import (
	"bytes"
	"fmt"
	"testing"
)

// rgbOf parses "rgb(r,g,b)".
func rgbOf(t *testing.T, s string) (r, g, b int) {
	t.Helper()
	if _, err := fmt.Sscanf(s, "rgb(%d,%d,%d)", &r, &g, &b); err != nil {
		t.Fatalf("fill %q: %v", s, err)
	}
	return r, g, b
}

func isRed(r, g, b int) bool  { return r == 255 && g == b && g < 255 }
func isBlue(r, g, b int) bool { return b == 255 && r == g && r < 255 }

func diff(t *testing.T, a, b Folded, o Options) map[string]frame {
	t.Helper()
	var buf bytes.Buffer
	if err := DiffSVG(&buf, a, b, o); err != nil {
		t.Fatal(err)
	}
	return frames(t, buf.Bytes())
}

func TestDiffSVG(t *testing.T) {
	// A: 40 samples; B: 80, so A counts twice once normalised. "same"
	// doubled its count but kept its share (10 of 40, 20 of 80); "grew"
	// went from 10 to 40 (+20 against A's 20 scaled), "shrank" from 10 to
	// 10 (-10), "gone" vanished (-20), "new" appeared (+10).
	a := Folded{"m;grew": 10, "m;same": 10, "m;gone": 10, "shrank": 10}
	b := Folded{"m;grew": 40, "m;same": 20, "m;new": 10, "shrank": 10}
	fr := diff(t, a, b, Options{Width: 820}) // 800 pixels for B's 80 samples

	if r, g, bl := rgbOf(t, fr["grew"].fill); !isRed(r, g, bl) || g != 0 {
		t.Errorf("grew: %s, want the deepest red (its change is the largest)", fr["grew"].fill)
	}
	if fr["same"].fill != "rgb(250,250,250)" {
		t.Errorf("same share: %s, want white", fr["same"].fill)
	}
	// Half the largest change, half the depth: 210*(20-10)/20.
	if fr["shrank"].fill != "rgb(105,105,255)" {
		t.Errorf("shrank: %s, want rgb(105,105,255), a middle blue", fr["shrank"].fill)
	}
	if fr["new"].fill != "rgb(255,105,105)" {
		t.Errorf("new: %s, want rgb(255,105,105), a middle red", fr["new"].fill)
	}
	// m: 30 of 40 in A (60 scaled), 70 of 80 in B: +10.
	if fr["m"].fill != "rgb(255,105,105)" {
		t.Errorf("m: %s, want rgb(255,105,105)", fr["m"].fill)
	}
	if _, ok := fr["gone"]; ok {
		t.Error("a frame B does not have was drawn with B's widths")
	}
	// Widths from B.
	for name, n := range map[string]float64{"all": 80, "m": 70, "grew": 40, "same": 20, "new": 10, "shrank": 10} {
		if fr[name].width != n*10 {
			t.Errorf("%s: width %.2f, want %.2f", name, fr[name].width, n*10)
		}
	}
	if want := "grew (A 10 samples, 25.00%; B 40 samples, 50.00%; +25.00 points)"; fr["grew"].title != want {
		t.Errorf("title %q, want %q", fr["grew"].title, want)
	}
	if want := "shrank (A 10 samples, 25.00%; B 10 samples, 12.50%; -12.50 points)"; fr["shrank"].title != want {
		t.Errorf("title %q, want %q", fr["shrank"].title, want)
	}

	// Negated: widths from A, so what vanished shows, in blue.
	fr = diff(t, a, b, Options{Width: 820, Negate: true}) // 800 pixels for A's 40
	g, ok := fr["gone"]
	if !ok {
		t.Fatal("negated: the vanished frame is not drawn")
	}
	if g.fill != "rgb(0,0,255)" {
		t.Errorf("negated: gone is %s, want the deepest blue", g.fill)
	}
	if g.width != 200 || fr["grew"].width != 200 {
		t.Errorf("negated: widths gone %.2f, grew %.2f, want A's 200, 200", g.width, fr["grew"].width)
	}
	if r, gg, bl := rgbOf(t, fr["grew"].fill); !isRed(r, gg, bl) {
		t.Errorf("negated: grew is %s, want red still", fr["grew"].fill)
	}
}

func TestDiffSVGIdentical(t *testing.T) {
	a := Folded{"x;y": 7, "x;z": 3}
	b := Folded{"x;y": 70, "x;z": 30} // ten times the samples, the same shares
	for name, f := range diff(t, a, b, Options{}) {
		if f.fill != "rgb(250,250,250)" {
			t.Errorf("%s: %s, want white: the shares are equal", name, f.fill)
		}
	}
	if err := DiffSVG(&bytes.Buffer{}, Folded{}, b, Options{}); err == nil {
		t.Error("an empty A was compared")
	}
}

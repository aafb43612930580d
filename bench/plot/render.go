package plot

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the formats Render writes.
var Formats = []string{"svg", "png"}

// Panel size in the image, and the band of the figure's title.
const (
	panelWidth  = 4.2 * vg.Inch
	panelHeight = 3 * vg.Inch
	titleHeight = 0.4 * vg.Inch
)

// Size is the figure's size in the image.
func (f Figure) Size() (w, h vg.Length) {
	cols := max(f.Cols, 1)
	return vg.Length(cols) * panelWidth, vg.Length(f.Rows())*panelHeight + titleHeight
}

// Render draws the figure in format "svg" or "png".
func (f Figure) Render(w io.Writer, format string) error {
	width, height := f.Size()
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))}
	default:
		return fmt.Errorf("plot: format %q: use %s", format, strings.Join(Formats, " or "))
	}
	if err := f.draw(draw.New(c)); err != nil {
		return fmt.Errorf("plot %s: %w", f.Name, err)
	}
	_, err := c.WriteTo(w)
	return err
}

func (f Figure) draw(dc draw.Canvas) error {
	title := gplot.New().Title.TextStyle
	title.XAlign, title.YAlign = draw.XCenter, draw.YCenter
	dc.FillText(title, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - titleHeight/2}, f.Title)
	body := draw.Crop(dc, 0, 0, 0, -titleHeight)

	rows, cols := f.Rows(), max(f.Cols, 1)
	plots := make([][]*gplot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*gplot.Plot, cols)
	}
	for i, p := range f.Panels {
		if len(p.Series) == 0 {
			continue // a gap that keeps the rows aligned
		}
		gp, err := p.plot()
		if err != nil {
			return fmt.Errorf("panel %q: %w", p.Title, err)
		}
		plots[i/cols][i%cols] = gp
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := gplot.Align(plots, tiles, body)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	return nil
}

// xyErr is a series as gonum's XYer and YErrorer.
type xyErr []Point

func (s xyErr) Len() int                    { return len(s) }
func (s xyErr) XY(i int) (float64, float64) { return s[i].X, s[i].Y }
func (s xyErr) YError(i int) (float64, float64) {
	return s[i].Y - s[i].Lo, s[i].Hi - s[i].Y
}

func (p Panel) plot() (*gplot.Plot, error) {
	gp := gplot.New()
	gp.Title.Text = p.Title
	gp.X.Label.Text = p.XLabel
	gp.Y.Label.Text = p.YLabel
	gp.Legend.Top, gp.Legend.Left = true, true
	gp.Legend.YOffs = -vg.Millimeter
	gp.Y.Tick.Marker = plainTicks{}
	gp.Add(plotter.NewGrid())
	xs := map[float64]bool{}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		i := s.Index
		pts := xyErr(s.Points)
		line, scatter, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Label, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(0)
		if s.Native {
			line.Dashes = plotutil.Dashes(1)
		}
		scatter.Color = plotutil.Color(i)
		scatter.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Label, err)
		}
		bars.Color = plotutil.Color(i)
		gp.Add(line, scatter, bars)
		var marked xyErr
		for _, pt := range s.Points {
			if pt.Marked {
				marked = append(marked, pt)
			}
		}
		if len(marked) > 0 {
			filled, err := plotter.NewScatter(marked)
			if err != nil {
				return nil, fmt.Errorf("series %s: %w", s.Label, err)
			}
			filled.Color = plotutil.Color(i)
			filled.Shape, filled.Radius = filledShape(plotutil.Shape(i), scatter.Radius)
			gp.Add(filled)
		}
		gp.Legend.Add(s.Label, line, scatter)
		for _, pt := range s.Points {
			xs[pt.X] = true
			ymin, ymax = math.Min(ymin, pt.Lo), math.Max(ymax, pt.Hi)
		}
	}
	if p.LogX {
		gp.X.Scale = gplot.LogScale{}
		var ticks gplot.ConstantTicks
		for x := range xs {
			ticks = append(ticks, gplot.Tick{Value: x, Label: sizeLabel(int(x))})
		}
		gp.X.Tick.Marker = ticks
		// Room either side of the outermost sizes.
		gp.X.Min, gp.X.Max = gp.X.Min/1.4, gp.X.Max*1.4
	} else if p.WholeX {
		var ticks gplot.ConstantTicks
		for x := range xs {
			ticks = append(ticks, gplot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
		}
		gp.X.Tick.Marker = ticks
		gp.X.Min, gp.X.Max = 0, gp.X.Max+1
	}
	// Room above the highest point for the legend, and zero in view for
	// goodput and counters (a change may be negative).
	if ymin >= 0 {
		gp.Y.Min = 0
	}
	if span := ymax - math.Min(ymin, 0); span > 0 {
		gp.Y.Max = ymax + (0.1+0.1*float64(len(p.Series)))*span
	} else {
		gp.Y.Max = ymax + 1
	}
	return gp, nil
}

func sizeLabel(z int) string {
	switch {
	case z >= 1<<20 && z%(1<<20) == 0:
		return fmt.Sprintf("%dM", z>>20)
	case z >= 1<<10 && z%(1<<10) == 0:
		return fmt.Sprintf("%dK", z>>10)
	}
	return fmt.Sprint(z)
}

// plainTicks are gonum's default ticks labelled without trailing zeros.
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []gplot.Tick {
	ts := gplot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}

// WriteFiles renders every figure in every format into dir as
// prefix+Name+"."+format, and returns the paths written.
func WriteFiles(dir, prefix string, figs []Figure, formats []string) ([]string, error) {
	for _, f := range formats {
		if !slices.Contains(Formats, f) {
			return nil, fmt.Errorf("plot: format %q: use %s", f, strings.Join(Formats, ", "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, fig := range figs {
		for _, format := range formats {
			var b bytes.Buffer
			if err := fig.Render(&b, format); err != nil {
				return out, err
			}
			p := filepath.Join(dir, prefix+fig.Name+"."+format)
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				return out, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// filledShape is the filled form of a series' glyph (a larger one for the
// glyphs that have none).
func filledShape(g draw.GlyphDrawer, r vg.Length) (draw.GlyphDrawer, vg.Length) {
	switch g.(type) {
	case draw.RingGlyph:
		return draw.CircleGlyph{}, r
	case draw.SquareGlyph:
		return draw.BoxGlyph{}, r
	case draw.TriangleGlyph:
		return draw.PyramidGlyph{}, r
	}
	return g, r * 1.8
}

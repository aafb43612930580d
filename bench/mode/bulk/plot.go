package bulk

import (
	"fmt"
	"slices"
	"strings"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/plot"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

func init() { plot.RegisterFigures(ScalingFigures) }

// ScalingFigures are the scaling figures of a bulk run with --conns, one
// per direction: a panel per encryption, message size, MTU and GSO
// setting, a series per transport (and driver), the aggregate goodput's
// median against the connection count with bars from the lowest to the
// highest sample. None for another run.
func ScalingFigures(d *results.Document) []plot.Figure {
	s := d.Spec
	if !s.Mode.IsDefault() || len(s.Conns) == 0 {
		return nil
	}
	cc := s.CCAxis()[0]
	var out []plot.Figure
	for _, dir := range s.Directions {
		f := plot.Figure{Name: "scaling-" + string(dir), Cols: 2,
			Title: fmt.Sprintf("Aggregate goodput by connections, %s (median; bars: lowest to highest)", dirWords(dir))}
		for _, crypto := range s.Crypto {
			for _, size := range s.Sizes {
				for _, mtu := range s.MTUs {
					for _, gso := range s.GSO {
						base := matrix.Cell{Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams, Netem: s.Netem, CC: cc}
						if p, ok := scalingPanel(d, base); ok {
							f.Panels = append(f.Panels, p)
						}
					}
				}
			}
		}
		if len(f.Panels) == 0 {
			continue
		}
		if len(f.Panels) == 1 {
			f.Cols = 1
		}
		out = append(out, f)
	}
	return out
}

// scalingPanel is the panel of one setting: a series per column with a
// measured cell in it.
func scalingPanel(d *results.Document, base matrix.Cell) (plot.Panel, bool) {
	s := d.Spec
	crypto := "encrypted"
	if !base.Crypto {
		crypto = "unencrypted"
	}
	p := plot.Panel{Title: fmt.Sprintf("%s, %s, %s", render.SizeName(base.Size), strings.TrimSpace(render.RowLabel(s, base.MTU, base.GSO)), crypto),
		XLabel: "connections", YLabel: "Mbit/s", WholeX: true}
	for _, col := range s.Columns() {
		c0 := matrix.ColumnCell(col, base)
		se := plot.Series{Label: render.ColumnLabel(d, col), Index: slices.Index(s.Transports, c0.Transport), Native: c0.Driver != ""}
		for _, n := range s.Conns {
			r, ok := lookup(d, col, base, n)
			if !ok || r.Status != results.StatusOK || len(r.Samples) == 0 {
				continue
			}
			se.Points = append(se.Points, plot.Point{X: float64(n), Y: r.MedianBps / 1e6, Lo: r.MinBps / 1e6, Hi: r.MaxBps / 1e6, Cell: r.Key})
		}
		if len(se.Points) > 0 {
			p.Series = append(p.Series, se)
		}
	}
	return p, len(p.Series) > 0
}

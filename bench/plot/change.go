package plot

import (
	"fmt"
	"math"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// Change is, per direction, the change of goodput from the old run to the
// new one in percent per cell, as results.Compare measured it. The bars span
// the changes the two runs' 95% intervals of the median allow (new low over
// old high to new high over old low): where a bar crosses zero the change is
// within the noise. Cells Compare could not test (too few samples for an
// interval) have no bar. Points of a significant change (results.Compare's
// Mann-Whitney U test) are marked: drawn filled. spec orders the
// transports.
func Change(c *results.Comparison, spec matrix.Spec) []Figure {
	type key struct {
		dir     matrix.Direction
		streams int
	}
	byKey := map[key][]results.CellComparison{}
	var keys []key
	streams := map[matrix.Direction]map[int]bool{}
	for _, cc := range c.Cells {
		k := key{cc.Direction, cc.Streams}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], cc)
		if streams[cc.Direction] == nil {
			streams[cc.Direction] = map[int]bool{}
		}
		streams[cc.Direction][cc.Streams] = true
	}
	var out []Figure
	for _, k := range keys {
		ccs := byKey[k]
		name, words := string(k.dir), dirWords(k.dir)
		if len(streams[k.dir]) > 1 {
			name += fmt.Sprintf("-streams%d", k.streams)
			words += fmt.Sprintf(", %d streams", k.streams)
		}
		cells := make([]matrix.Cell, len(ccs))
		for i, cc := range ccs {
			cells[i] = cc.Cell
		}
		f, ok := figureOf("change-goodput-"+name, fmt.Sprintf("Goodput change, new against old, %s (filled: significant; bars: what the 95%% intervals allow, none with too few repeats)", words),
			"change %", spec, cells, func(cl matrix.Cell) (Point, bool) {
				for _, cc := range ccs {
					if cc.Cell == cl {
						return changePoint(cc), true
					}
				}
				return Point{}, false
			})
		if ok {
			out = append(out, f)
		}
	}
	return out
}

func changePoint(cc results.CellComparison) Point {
	d := cc.Goodput
	pt := Point{Y: d.ChangePct, Lo: d.ChangePct, Hi: d.ChangePct, Cell: cc.Key, Marked: d.Significant}
	if d.Old.Lo > 0 && d.Old.Hi > 0 {
		lo := (d.New.Lo/d.Old.Hi - 1) * 100
		hi := (d.New.Hi/d.Old.Lo - 1) * 100
		if !math.IsInf(lo, 0) && !math.IsNaN(lo) && !math.IsInf(hi, 0) && !math.IsNaN(hi) && lo <= pt.Y && hi >= pt.Y {
			pt.Lo, pt.Hi = lo, hi
		}
	}
	return pt
}

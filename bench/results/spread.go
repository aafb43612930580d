package results

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// SpreadConfidence is the confidence level of the interval a cell's spread
// measures: the median's distribution-free confidence interval, between two
// order statistics of the samples, as benchstat computes it
// (benchmath.AssumeNothing, here at 0.75 rather than 0.95). With up to four
// samples no interval reaches 0.75 short of the whole range, so a spread is
// then (max-min)/median; five leave out one extreme, six both, nine two of
// each side and one more. More repeats therefore narrow it, as they should,
// while max-min only grows with them.
const SpreadConfidence = 0.75

// MaxSpread is the spread (the interval's width over the median) above which
// a cell is flagged, and below which Runner stops adding repeats.
const MaxSpread = 0.25

// Spread summarizes samples: their median, the median's confidence
// interval at SpreadConfidence, and its width relative to the median.
type Spread struct {
	Median, Min, Max float64
	Lo, Hi           float64 // the interval
	Width            float64 // (Hi-Lo)/Median
	Wide             bool    // Width over MaxSpread (or not a number)
}

// SpreadOf summarizes the samples v.
func SpreadOf(v []float64) Spread {
	n := len(v)
	if n == 0 {
		return Spread{}
	}
	sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &benchmath.DefaultThresholds), SpreadConfidence)
	r := Spread{Median: sum.Center, Min: slices.Min(v), Max: slices.Max(v), Lo: sum.Lo, Hi: sum.Hi}
	if math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) {
		r.Lo, r.Hi = r.Min, r.Max // too few samples for the level: the range
	}
	if r.Median > 0 {
		r.Width = (r.Hi - r.Lo) / r.Median
	}
	r.Wide = n > 1 && (r.Width > MaxSpread || math.IsNaN(r.Width))
	return r
}

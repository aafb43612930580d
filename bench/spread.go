//go:build linux

package bench

import (
	"math"
	"sort"
)

// SpreadConfidence is the confidence level of the interval a cell's spread
// measures: the median's distribution-free confidence interval, between two
// order statistics of the samples, as benchstat's (at 0.95) is. With up to
// five samples the narrowest such interval at 0.75 is the whole range, so a
// spread is then (max-min)/median; with six it leaves out the lowest and the
// highest sample, with nine the two lowest and the two highest. More repeats
// therefore narrow it, as they should, while max-min only grows with them.
const SpreadConfidence = 0.75

// MaxSpread is the spread (the interval's width over the median) above which
// a cell is flagged, and below which Runner stops adding repeats.
const MaxSpread = 0.25

// spread summarizes samples: their median, the median's confidence
// interval at SpreadConfidence, and its width relative to the median.
type spread struct {
	Median, Min, Max float64
	Lo, Hi           float64 // the interval
	Width            float64 // (Hi-Lo)/Median
	Wide             bool    // Width over MaxSpread (or not a number)
}

func spreadOf(v []float64) spread {
	n := len(v)
	if n == 0 {
		return spread{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	var r spread
	r.Min, r.Max = s[0], s[n-1]
	r.Median = s[n/2]
	if n%2 == 0 {
		r.Median = (s[n/2-1] + s[n/2]) / 2
	}
	k := medianIntervalRank(n)
	r.Lo, r.Hi = s[k-1], s[n-k]
	if r.Median > 0 {
		r.Width = (r.Hi - r.Lo) / r.Median
	}
	r.Wide = n > 1 && (r.Width > MaxSpread || math.IsNaN(r.Width))
	return r
}

// medianIntervalRank returns the largest k (at least 1) for which the
// order statistics x(k) and x(n+1-k) of n samples bracket the median with
// probability SpreadConfidence or more, whatever the distribution:
// 1 - 2*P(Binomial(n, 1/2) <= k-1).
func medianIntervalRank(n int) int {
	k := 1
	for next := 2; next <= (n+1)/2; next++ {
		if medianCoverage(n, next) < SpreadConfidence {
			break
		}
		k = next
	}
	return k
}

// medianCoverage is the probability that [x(k), x(n+1-k)] holds the median.
func medianCoverage(n, k int) float64 {
	// P(Binomial(n, 1/2) <= k-1), summed in floating point: n is a count
	// of repeats, far below where this loses precision.
	c, sum := 1.0, 0.0
	for i := 0; i < k; i++ {
		sum += c
		c = c * float64(n-i) / float64(i+1)
	}
	return 1 - 2*sum/math.Pow(2, float64(n))
}

// wideNow reports whether the samples so far have a wide spread, without
// touching r's summary.
func (r *CellResult) wideNow() bool {
	tmp := *r
	tmp.summarize()
	return tmp.WideSpread
}

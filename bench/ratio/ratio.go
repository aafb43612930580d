package ratio

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of every interval this package computes.
const Confidence = 0.95

var (
	// ErrNoSamples is wrapped by the error for a cell without samples.
	ErrNoSamples = errors.New("no samples")
	// ErrNotPositive is wrapped by the error for a sample that is zero,
	// negative or not finite: it has no logarithm, so no ratio.
	ErrNotPositive = errors.New("sample is not a positive finite number")
	// ErrTooFew is wrapped by Compare's error when a cell has one sample,
	// which gives no variance to test against.
	ErrTooFew = errors.New("too few samples for a test (at least 2 per cell)")
)

// Interval is a ratio with its confidence interval at Confidence.
type Interval struct {
	// Center is the ratio of the two cells' geometric means.
	Center float64 `json:"center"`
	// Lo and Hi bound the interval; [0, +Inf] when a cell has one sample.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// N and M are the numerator's and denominator's sample counts.
	N int `json:"n"`
	M int `json:"m"`
}

// Bounded reports whether the interval is finite (both cells have at least
// two samples).
func (i Interval) Bounded() bool { return !math.IsInf(i.Hi, 0) }

// Contains reports whether x lies in the interval.
func (i Interval) Contains(x float64) bool { return i.Lo <= x && x <= i.Hi }

// logStats are the mean of a cell's log samples and the variance of that
// mean (var/n), with the cell's count.
type logStats struct {
	mean, varMean float64
	n             int
}

// stats takes the logarithms of a cell's samples; what names the cell in
// the error.
func stats(what string, xs []float64) (logStats, error) {
	if len(xs) == 0 {
		return logStats{}, fmt.Errorf("%s: %w", what, ErrNoSamples)
	}
	var sum float64
	logs := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return logStats{}, fmt.Errorf("%s: sample %d is %v: %w (a cell that moved nothing has no ratio; remeasure it)", what, i, x, ErrNotPositive)
		}
		logs[i] = math.Log(x)
		sum += logs[i]
	}
	s := logStats{mean: sum / float64(len(xs)), n: len(xs), varMean: math.Inf(1)}
	if s.n > 1 {
		var ss float64
		for _, l := range logs {
			ss += (l - s.mean) * (l - s.mean)
		}
		s.varMean = ss / float64(s.n-1) / float64(s.n)
	}
	return s, nil
}

// welch is the standard error of a sum or difference of independent log
// means and its Welch-Satterthwaite degrees of freedom.
func welch(parts ...logStats) (se, df float64) {
	var v, den float64
	for _, p := range parts {
		v += p.varMean
		den += p.varMean * p.varMean / float64(p.n-1)
	}
	se = math.Sqrt(v)
	if den == 0 { // no spread at all: the estimate is exact
		return se, math.Inf(1)
	}
	return se, v * v / den
}

// tQuantile is Student's t quantile at p with df degrees of freedom (the
// normal's where df is infinite).
func tQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Of is the ratio num/den of two cells' samples (goodput per sample, in
// any one unit) with its interval at Confidence (see the package doc for
// the method). With one sample in either cell the interval is [0, +Inf].
func Of(num, den []float64) (Interval, error) {
	a, err := stats("numerator", num)
	if err != nil {
		return Interval{}, err
	}
	b, err := stats("denominator", den)
	if err != nil {
		return Interval{}, err
	}
	d := a.mean - b.mean
	r := Interval{Center: math.Exp(d), Lo: 0, Hi: math.Inf(1), N: a.n, M: b.n}
	if a.n < 2 || b.n < 2 {
		return r, nil
	}
	se, df := welch(a, b)
	h := tQuantile(1-(1-Confidence)/2, df) * se
	r.Lo, r.Hi = math.Exp(d-h), math.Exp(d+h)
	return r, nil
}

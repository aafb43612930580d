package ratio

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Cells are the samples of the two cells of one ratio in one run.
type Cells struct {
	Num, Den []float64
}

// Change says whether a ratio moved between run A and run B.
type Change struct {
	A, B Interval
	// Factor is B's ratio over A's, with its interval at Confidence (its
	// N and M are zero: it comes from four cells).
	Factor Interval
	// P is the two-sided p value of Welch's t test of log(B/A) = 0.
	P float64
	// Significant is P < alpha.
	Significant bool
}

// Compare tests whether the ratio a.Num/a.Den differs from b.Num/b.Den
// (see the package doc for the test), at significance level alpha (0.05
// when zero). Every cell needs at least two samples (else ErrTooFew).
func Compare(a, b Cells, alpha float64) (Change, error) {
	if alpha == 0 {
		alpha = 0.05
	}
	var st [4]logStats
	for i, c := range []struct {
		what string
		xs   []float64
	}{{"run A numerator", a.Num}, {"run A denominator", a.Den}, {"run B numerator", b.Num}, {"run B denominator", b.Den}} {
		s, err := stats(c.what, c.xs)
		if err != nil {
			return Change{}, err
		}
		if s.n < 2 {
			return Change{}, fmt.Errorf("%s has 1 sample: %w (run more repeats)", c.what, ErrTooFew)
		}
		st[i] = s
	}
	var ch Change
	ch.A, _ = Of(a.Num, a.Den) // cannot fail: the samples passed stats
	ch.B, _ = Of(b.Num, b.Den)
	d := (st[2].mean - st[3].mean) - (st[0].mean - st[1].mean)
	se, df := welch(st[:]...)
	h := tQuantile(1-(1-Confidence)/2, df) * se
	ch.Factor = Interval{Center: math.Exp(d), Lo: math.Exp(d - h), Hi: math.Exp(d + h)}
	ch.P = pValue(d, se, df)
	ch.Significant = ch.P < alpha
	return ch, nil
}

// pValue is the two-sided p value of d against 0 with standard error se.
// With no spread at all it is 1 for no difference and 0 for any.
func pValue(d, se, df float64) float64 {
	if se == 0 {
		if d == 0 {
			return 1
		}
		return 0
	}
	t := math.Abs(d) / se
	if math.IsInf(df, 1) {
		return 2 * distuv.UnitNormal.Survival(t)
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

package ratio

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// logNormal draws n goodput samples around median with a relative spread
// sigma (the standard deviation of their logarithm).
func logNormal(r *rand.Rand, n int, median, sigma float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(sigma*r.NormFloat64())
	}
	return xs
}

func TestSelfRatioIsOne(t *testing.T) {
	xs := []float64{3010, 2890, 3170, 2950, 3320}
	r, err := Of(xs, xs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Center != 1 || !r.Contains(1) || !r.Bounded() || !(r.Lo < 1 && r.Hi > 1) {
		t.Fatalf("a cell over itself: %+v, want 1 inside a finite interval around it", r)
	}
}

// TestKnownRatio checks the estimate and the interval against values
// computed by hand: num {1, 4} has geometric mean 2 and log variance
// (ln 4)²/2, so se = ln 2; den {1, 1, 1} has no spread, so ν = 1 and
// t(0.975, 1) = 12.7062 (the textbook table), and the interval is
// 2·2^(∓12.7062).
func TestKnownRatio(t *testing.T) {
	r, err := Of([]float64{1, 4}, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	const t975df1 = 12.7062047
	wantLo, wantHi := 2*math.Pow(2, -t975df1), 2*math.Pow(2, t975df1)
	if !close(r.Center, 2) || !close(r.Lo, wantLo) || !close(r.Hi, wantHi) || r.N != 2 || r.M != 3 {
		t.Fatalf("got %+v, want 2 [%g, %g] n=2 m=3", r, wantLo, wantHi)
	}
	// Constant samples: the ratio is exact.
	r, err = Of([]float64{4, 4, 4}, []float64{2, 2})
	if err != nil || r.Center != 2 || r.Lo != 2 || r.Hi != 2 {
		t.Fatalf("4/2 without spread: %+v, %v; want exactly 2 [2, 2]", r, err)
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }

// TestCoverage checks the interval's promise: over many draws of log-normal
// cells with a known ratio, about 95% of the intervals contain it (three
// samples per cell, as a matrix cell has by default).
func TestCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	hit := 0
	for range trials {
		iv, err := Of(logNormal(r, 3, 470, 0.1), logNormal(r, 3, 1000, 0.05))
		if err != nil {
			t.Fatal(err)
		}
		if iv.Contains(0.47) {
			hit++
		}
	}
	if got := float64(hit) / trials; got < 0.93 || got > 0.975 {
		t.Fatalf("coverage %.3f, want about %.2f", got, Confidence)
	}
}

func TestDegenerate(t *testing.T) {
	for _, c := range []struct {
		name     string
		num, den []float64
		want     error
	}{
		{"no numerator samples", nil, []float64{1}, ErrNoSamples},
		{"no denominator samples", []float64{1}, nil, ErrNoSamples},
		{"zero in the denominator", []float64{1, 2}, []float64{3, 0}, ErrNotPositive},
		{"zero numerator", []float64{0, 0}, []float64{3, 4}, ErrNotPositive},
		{"negative", []float64{-1, 2}, []float64{3, 4}, ErrNotPositive},
		{"NaN", []float64{math.NaN(), 2}, []float64{3, 4}, ErrNotPositive},
		{"Inf", []float64{math.Inf(1), 2}, []float64{3, 4}, ErrNotPositive},
	} {
		if _, err := Of(c.num, c.den); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	iv, err := Of([]float64{5}, []float64{2, 2.2})
	if err != nil || iv.Bounded() || iv.Lo != 0 || !math.IsInf(iv.Hi, 1) || math.IsNaN(iv.Center) {
		t.Fatalf("one sample: %+v, %v; want a center and the interval [0, +Inf]", iv, err)
	}
}

func TestIntervalJSON(t *testing.T) {
	iv, err := Of([]float64{5}, []float64{2, 2.5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(iv)
	if err != nil {
		t.Fatalf("an unbounded interval does not encode: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// 5 over the geometric mean of 2 and 2.5 (sqrt 5) is sqrt 5.
	if c, _ := got["center"].(float64); !close(c, math.Sqrt(5)) || got["lo"] != 0.0 || got["hi"] != nil || got["n"] != 1.0 || got["m"] != 2.0 {
		t.Fatalf("got %s, want center sqrt(5), lo 0, hi null, n 1, m 2", b)
	}
}

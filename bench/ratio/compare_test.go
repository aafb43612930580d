package ratio

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// run draws one run's two cells: a numerator at ratio times the
// denominator's 1000, with 5% spread each.
func run(r *rand.Rand, n int, ratio float64) Cells {
	return Cells{Num: logNormal(r, n, 1000*ratio, 0.05), Den: logNormal(r, n, 1000, 0.05)}
}

func TestCompareSameDistribution(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	ch, err := Compare(run(r, 6, 0.41), run(r, 6, 0.41), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Significant || !ch.Factor.Contains(1) {
		t.Fatalf("two runs of one distribution: %+v, want no significant change", ch)
	}
	// Over many such pairs the test is wrong about 5% of the time, not more.
	const trials = 2000
	wrong := 0
	for range trials {
		ch, err := Compare(run(r, 3, 0.41), run(r, 3, 0.41), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Significant {
			wrong++
		}
	}
	if rate := float64(wrong) / trials; rate > 0.065 {
		t.Fatalf("false positives %.3f at alpha 0.05", rate)
	}
}

func TestCompareDetectsShift(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	ch, err := Compare(run(r, 6, 0.41), run(r, 6, 0.47), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Significant || ch.Factor.Center <= 1 || ch.Factor.Contains(1) {
		t.Fatalf("0.41 -> 0.47 with 5%% spread and 6 samples: %+v, want a significant rise", ch)
	}
	if !ch.A.Contains(0.41) || !ch.B.Contains(0.47) {
		t.Fatalf("the runs' ratios %+v and %+v miss 0.41 and 0.47", ch.A, ch.B)
	}
	// The test's power at this shift: t is about 3.3 (log 0.47/0.41 over
	// four cells' 5%/sqrt(6)), so it finds it nearly always.
	const trials = 2000
	found := 0
	for range trials {
		ch, err := Compare(run(r, 6, 0.41), run(r, 6, 0.47), 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if ch.Significant && ch.Factor.Center > 1 {
			found++
		}
	}
	if rate := float64(found) / trials; rate < 0.85 {
		t.Fatalf("found the shift in %.3f of runs, want at least 0.85", rate)
	}
}

func TestCompareDegenerate(t *testing.T) {
	good := Cells{Num: []float64{4, 4.1}, Den: []float64{9, 9.2}}
	if _, err := Compare(good, Cells{Num: []float64{4}, Den: []float64{9, 9.1}}, 0); !errors.Is(err, ErrTooFew) {
		t.Fatalf("one sample: %v, want ErrTooFew", err)
	}
	if _, err := Compare(good, Cells{Num: []float64{4, 5}, Den: []float64{0, 9}}, 0); !errors.Is(err, ErrNotPositive) {
		t.Fatalf("zero denominator: %v, want ErrNotPositive", err)
	}
	// No spread anywhere: the same ratio is no change, another is certain.
	flat := Cells{Num: []float64{4, 4}, Den: []float64{8, 8}}
	if ch, err := Compare(flat, flat, 0); err != nil || ch.P != 1 || ch.Significant {
		t.Fatalf("identical constant runs: %+v, %v", ch, err)
	}
	ch, err := Compare(flat, Cells{Num: []float64{5, 5}, Den: []float64{8, 8}}, 0)
	if err != nil || ch.P != 0 || !ch.Significant || math.IsNaN(ch.Factor.Lo) {
		t.Fatalf("constant runs 0.5 -> 0.625: %+v, %v", ch, err)
	}
}

package results

import (
	"math"
	"testing"
)

func TestSpreadInterval(t *testing.T) {
	// The interval's order statistics by the number of samples 1..n: the
	// range while no narrower interval reaches 0.75, then narrower.
	want := map[int][2]float64{1: {1, 1}, 2: {1, 2}, 3: {1, 3}, 4: {1, 4}, 5: {1, 4}, 6: {2, 5}, 9: {3, 7}, 12: {4, 9}, 20: {7, 13}}
	for n, w := range want {
		v := make([]float64, n)
		for i := range v {
			v[n-1-i] = float64(i + 1) // in no order: SpreadOf sorts
		}
		if s := SpreadOf(v); s.Lo != w[0] || s.Hi != w[1] || s.Min != 1 || s.Max != float64(n) {
			t.Errorf("n=%d: interval %v..%v (range %v..%v), want %v..%v", n, s.Lo, s.Hi, s.Min, s.Max, w[0], w[1])
		}
	}
}

func TestSpreadOf(t *testing.T) {
	// Three samples: the interval is the range, as the spread always was.
	s := SpreadOf([]float64{90, 110, 100})
	if s.Median != 100 || s.Lo != 90 || s.Hi != 110 || math.Abs(s.Width-0.2) > 1e-12 || s.Wide {
		t.Errorf("3 samples: %+v", s)
	}
	// One disturbed sample among three marks the cell...
	s = SpreadOf([]float64{100, 102, 60})
	if !s.Wide {
		t.Errorf("3 samples with an outlier: %+v, want wide", s)
	}
	// ...and among six it is outside the interval (but still the minimum).
	s = SpreadOf([]float64{100, 102, 60, 98, 101, 99})
	if s.Wide || s.Lo != 98 || s.Hi != 101 || s.Min != 60 || s.Max != 102 || s.Median != 99.5 {
		t.Errorf("6 samples with an outlier: %+v, want narrow, 98..101", s)
	}
	// Samples that really scatter stay wide however many there are.
	s = SpreadOf([]float64{60, 140, 70, 130, 80, 120, 90, 110, 100})
	if !s.Wide || s.Lo != 80 || s.Hi != 120 {
		t.Errorf("9 scattered samples: %+v, want wide, 80..120", s)
	}
	if s := SpreadOf([]float64{5}); s.Wide || s.Width != 0 || s.Median != 5 {
		t.Errorf("one sample: %+v", s)
	}
	if s := SpreadOf([]float64{0, 0}); s.Wide || s.Width != 0 {
		t.Errorf("zero samples: %+v", s)
	}
	if s := SpreadOf(nil); s != (Spread{}) {
		t.Errorf("no samples: %+v", s)
	}
}

func TestDisturbed(t *testing.T) {
	for _, c := range []struct {
		s    Sample
		want bool
	}{
		{Sample{}, false},
		{Sample{CPU: CPU{StealCores: MaxSteal}}, false},
		{Sample{CPU: CPU{StealCores: 0.34}}, true},
		// Two-host mode: the server host's steal counts too.
		{Sample{CPU: CPU{StealCores: 0.03}, ServerCPU: &CPU{StealCores: 0.03}}, true},
	} {
		if got := c.s.Disturbed(); got != c.want {
			t.Errorf("steal %v + %v: disturbed %v, want %v", c.s.CPU.StealCores, c.s.ServerCPU, got, c.want)
		}
	}
}

package results

import (
	"math"
	"testing"
)

func TestJainIndex(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0, 0}, 0},
		{[]float64{5}, 1},
		{[]float64{3, 3, 3, 3}, 1},
		{[]float64{4, 0, 0, 0}, 0.25},
		{[]float64{1, 2}, 9.0 / 10},
		{[]float64{1, 1, 2}, 16.0 / 18},
	} {
		if got := JainIndex(c.x); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("JainIndex(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

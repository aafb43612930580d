package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"
)

// exact is the q-th percentile of sorted values by nearest rank, as an HDR
// histogram defines it: the value of rank q/100*n rounded to the nearest
// (q/100*n is not exact in floating point, so a ceiling would be one off).
func exact(sorted []time.Duration, q float64) time.Duration {
	n := int(q/100*float64(len(sorted)) + 0.5)
	return sorted[max(n, 1)-1]
}

func within(t *testing.T, what string, got, want time.Duration, rel float64) {
	t.Helper()
	if d := math.Abs(float64(got-want)) / float64(want); d > rel {
		t.Errorf("%s = %v, want %v (off by %.3f%%, allowed %.3f%%)", what, got, want, d*100, rel*100)
	}
}

// A uniform distribution of 1..100000 µs, each once: the percentiles are
// known in closed form (p50 is 50000 µs, p99.99 is 99990 µs).
func TestUniformPercentiles(t *testing.T) {
	h := New()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	s := h.Summary()
	if s.Count != 100000 {
		t.Fatalf("count %d, want 100000", s.Count)
	}
	want := map[string]time.Duration{
		"p50": 50000 * time.Microsecond, "p90": 90000 * time.Microsecond, "p99": 99000 * time.Microsecond,
		"p99.9": 99900 * time.Microsecond, "p99.99": 99990 * time.Microsecond,
	}
	got := map[string]time.Duration{"p50": s.P50, "p90": s.P90, "p99": s.P99, "p99.9": s.P999, "p99.99": s.P9999}
	for k, w := range want {
		within(t, k, got[k], w, 1e-3)
	}
	within(t, "mean", s.Mean, 50000500*time.Nanosecond, 1e-3)
	within(t, "min", s.Min, time.Microsecond, 1e-3)
	within(t, "max", s.Max, 100*time.Millisecond, 1e-3)
}

// A long-tailed distribution (log-normal around 30 µs, as round trips on a
// veth pair look), checked against the exact percentiles of the same values.
func TestLogNormalPercentiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := New()
	vals := make([]time.Duration, 200000)
	for i := range vals {
		vals[i] = time.Duration(30e3 * math.Exp(0.8*r.NormFloat64()))
		h.Record(vals[i])
	}
	slices.Sort(vals)
	s := h.Summary()
	for i, q := range Percentiles {
		within(t, "p"+formatQ(q), s.Values()[i], exact(vals, q), 1e-3)
	}
	var sum float64
	for _, v := range vals {
		sum += float64(v)
	}
	within(t, "mean", s.Mean, time.Duration(sum/float64(len(vals))), 1e-3)
}

func formatQ(q float64) string { return strconv.FormatFloat(q, 'g', -1, 64) }

// Merging per-connection histograms gives the histogram of all the values,
// and the encoded form reads back the same.
func TestMergeAndEncode(t *testing.T) {
	a, b, all := New(), New(), New()
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * time.Microsecond
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	a.Merge(b)
	if a.Summary() != all.Summary() {
		t.Fatalf("merged %v, want %v", a.Summary(), all.Summary())
	}
	enc, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Summary() != all.Summary() {
		t.Fatalf("decoded %v, want %v", back.Summary(), all.Summary())
	}
	// Out-of-range values are clamped, not lost.
	c := New()
	c.Record(0)
	c.Record(time.Hour)
	if c.Count() != 2 || c.Quantile(100) < 99*time.Second {
		t.Fatalf("clamped: count %d, max %v", c.Count(), c.Quantile(100))
	}
	if (New().Summary() != Summary{}) {
		t.Fatal("an empty histogram's summary is not zero")
	}
}

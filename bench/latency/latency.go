// Package latency records round-trip times in an HDR histogram
// (github.com/HdrHistogram/hdrhistogram-go) and summarizes them as the
// percentiles request/response benchmarks report: p50, p90, p99, p99.9 and
// p99.99, with the mean, the extremes and the count.
//
// A Histogram keeps every value within 0.1% (three significant digits) from
// 1 ns to 100 s in a fixed few tens of kilobytes, so recording is a few
// nanoseconds and allocates nothing: it can sit in a ping-pong loop. It is
// not safe for concurrent use; give each connection its own and Merge them.
package latency

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Range and precision of every Histogram: values in nanoseconds from 1 ns to
// 100 s, with three significant digits.
const (
	lowest  = 1
	highest = int64(100 * time.Second)
	digits  = 3
)

// Percentiles are the quantiles a Summary reports, in percent.
var Percentiles = []float64{50, 90, 99, 99.9, 99.99}

// Histogram records durations.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowest, highest, digits)}
}

// Record adds one duration; durations outside 1 ns..100 s are clamped to it.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < lowest {
		v = lowest
	} else if v > highest {
		v = highest
	}
	h.h.RecordValue(v) // within range: cannot fail
}

// Count is the number of durations recorded.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) { h.h.Merge(o.h) }

// Reset empties the histogram.
func (h *Histogram) Reset() { h.h.Reset() }

// Quantile is the duration at or below which q percent of the recorded
// values lie (to the histogram's precision).
func (h *Histogram) Quantile(q float64) time.Duration {
	return time.Duration(h.h.ValueAtQuantile(q))
}

// Summary summarizes the histogram.
func (h *Histogram) Summary() Summary {
	s := Summary{
		Count: h.h.TotalCount(),
		Mean:  time.Duration(h.h.Mean()),
		Min:   time.Duration(h.h.Min()),
		Max:   time.Duration(h.h.Max()),
	}
	if s.Count == 0 {
		return Summary{}
	}
	s.P50, s.P90, s.P99, s.P999, s.P9999 = h.Quantile(50), h.Quantile(90), h.Quantile(99), h.Quantile(99.9), h.Quantile(99.99)
	return s
}

// Encode is the histogram in the HDR histogram's compressed, base64 form
// (HISTFORMAT "V2"), which HdrHistogram libraries in every language read.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("latency: encode the histogram: %w", err)
	}
	return string(b), nil
}

// Decode reads a histogram that Encode wrote.
func Decode(s string) (*Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("latency: decode the histogram: %w", err)
	}
	return &Histogram{h: h}, nil
}

// Summary is what a Histogram held, as the results record it (durations in
// nanoseconds in JSON).
type Summary struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	Min   time.Duration `json:"min_ns"`
	Max   time.Duration `json:"max_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99_9_ns"`
	P9999 time.Duration `json:"p99_99_ns"`
}

// Values lists the percentiles in the order of Percentiles.
func (s Summary) Values() []time.Duration {
	return []time.Duration{s.P50, s.P90, s.P99, s.P999, s.P9999}
}

// String prints the summary on one line, in microseconds.
func (s Summary) String() string {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	return fmt.Sprintf("%d round trips: mean %.1f µs, min %.1f, p50 %.1f, p90 %.1f, p99 %.1f, p99.9 %.1f, p99.99 %.1f, max %.1f",
		s.Count, us(s.Mean), us(s.Min), us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.P9999), us(s.Max))
}

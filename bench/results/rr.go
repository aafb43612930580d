package results

import (
	"time"

	"golang.org/x/perf/benchmath"
	"kquic.dev/bench/latency"
	"kquic.dev/bench/matrix"
)

// RRSample is what one rr-mode sample measured over its window: every round
// trip of every connection, each connection with one request in flight.
type RRSample struct {
	// Requests is the round trips completed in the window, and PerSecond
	// their rate.
	Requests  int64   `json:"requests"`
	PerSecond float64 `json:"requests_per_second"`
	// Latency summarizes the round trips (request written to response
	// read), and Histogram holds them all (HdrHistogram's compressed
	// base64 form, which HdrHistogram libraries read; latency.Decode).
	Latency   latency.Summary `json:"latency"`
	Histogram string          `json:"histogram"`
	// InFlight is the fraction of the time between each connection's first
	// and last measured round trip that it had a request in flight: 1 less
	// the time kqbench's loop took between round trips (and any time its
	// goroutine waited to run).
	InFlight float64 `json:"in_flight"`
}

// RRSummary summarizes an rr cell's samples.
type RRSummary struct {
	// MedianPerSecond, MinPerSecond and MaxPerSecond are over the samples.
	MedianPerSecond float64 `json:"median_requests_per_second"`
	MinPerSecond    float64 `json:"min_requests_per_second"`
	MaxPerSecond    float64 `json:"max_requests_per_second"`
	// Latency is over every round trip of every sample (their histograms
	// merged).
	Latency latency.Summary `json:"latency"`
}

func (r *CellResult) summarizeRR() {
	h := latency.New()
	var rps []float64
	for _, s := range r.Samples {
		if s.RR == nil {
			continue
		}
		rps = append(rps, s.RR.PerSecond)
		if sh, err := latency.Decode(s.RR.Histogram); err == nil {
			h.Merge(sh)
		}
	}
	if len(rps) == 0 {
		return
	}
	sum := &RRSummary{Latency: h.Summary()}
	sp := SpreadOf(rps)
	sum.MedianPerSecond, sum.MinPerSecond, sum.MaxPerSecond = sp.Median, sp.Min, sp.Max
	r.RR = sum
}

// rrDeltas compares two rr cells' samples: requests per second and the
// round trip's p50, p99 and p99.9 (in µs), each sample one value (nil for
// bulk cells).
func rrDeltas(a, b CellResult, thr *benchmath.Thresholds, alpha float64) []Delta {
	if a.Mode != matrix.ModeRR || b.Mode != matrix.ModeRR {
		return nil
	}
	figures := []struct {
		name string
		get  func(*RRSample) float64
	}{
		{"requests/s", func(s *RRSample) float64 { return s.PerSecond }},
		{"p50 µs", func(s *RRSample) float64 { return us(s.Latency.P50) }},
		{"p99 µs", func(s *RRSample) float64 { return us(s.Latency.P99) }},
		{"p99.9 µs", func(s *RRSample) float64 { return us(s.Latency.P999) }},
	}
	values := func(c CellResult, get func(*RRSample) float64) []float64 {
		var v []float64
		for _, s := range c.Samples {
			if s.RR != nil {
				v = append(v, get(s.RR))
			}
		}
		return v
	}
	var out []Delta
	for _, f := range figures {
		out = append(out, delta(f.name, values(a, f.get), values(b, f.get), thr, alpha))
	}
	return out
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

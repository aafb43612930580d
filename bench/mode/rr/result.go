package rr

import (
	"time"

	"kquic.dev/bench/latency"
	"kquic.dev/bench/results"
)

// Sample is what one rr sample measured over its window: every round trip
// of every connection, each connection with one request in flight (the
// sample's Bytes count the requests and the responses).
type Sample struct {
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

// Summary summarizes an rr cell's samples.
type Summary struct {
	// MedianPerSecond, MinPerSecond and MaxPerSecond are over the samples.
	MedianPerSecond float64 `json:"median_requests_per_second"`
	MinPerSecond    float64 `json:"min_requests_per_second"`
	MaxPerSecond    float64 `json:"max_requests_per_second"`
	// Latency is over every round trip of every sample (their histograms
	// merged).
	Latency latency.Summary `json:"latency"`
}

// key is the JSON key of the mode's figures, in a sample and in a cell.
const payloadKey = "rr"

// PayloadKey is "rr".
func (*Sample) PayloadKey() string { return payloadKey }

// PayloadKey is "rr".
func (*Summary) PayloadKey() string { return payloadKey }

func init() {
	results.RegisterPayload(results.PayloadType{
		Key:       payloadKey,
		Sample:    func() results.Payload { return &Sample{} },
		Cell:      func() results.Payload { return &Summary{} },
		CellAfter: "peer_offloads",
		Summarize: summarize,
		Figures: []results.Figure{
			{Name: "requests/s", Value: func(p results.Payload) float64 { return p.(*Sample).PerSecond }},
			{Name: "p50 µs", Value: func(p results.Payload) float64 { return us(p.(*Sample).Latency.P50) }},
			{Name: "p99 µs", Value: func(p results.Payload) float64 { return us(p.(*Sample).Latency.P99) }},
			{Name: "p99.9 µs", Value: func(p results.Payload) float64 { return us(p.(*Sample).Latency.P999) }},
		},
		Named: []results.NamedFigure{
			{Name: "rps", Unit: "req/s", About: "requests per second; rr mode", Value: func(p results.Payload) float64 { return p.(*Sample).PerSecond }},
			{Name: "p50", Unit: "µs", About: "µs round trips; rr mode", LowerBetter: true, Value: func(p results.Payload) float64 { return us(p.(*Sample).Latency.P50) }},
			{Name: "p99", Unit: "µs", About: "µs round trips; rr mode", LowerBetter: true, Value: func(p results.Payload) float64 { return us(p.(*Sample).Latency.P99) }},
		},
	})
}

// SampleOf is the rr figures of a sample, nil for a sample without.
func SampleOf(s *results.Sample) *Sample {
	p, _ := s.Payload.(*Sample)
	return p
}

// SummaryOf is the rr summary of a cell, nil for a cell without.
func SummaryOf(r *results.CellResult) *Summary {
	p, _ := r.Payload.(*Summary)
	return p
}

// summarize sets the cell's summary: the requests per second over the
// samples, the round trips of all of them.
func summarize(r *results.CellResult) {
	h := latency.New()
	var rps []float64
	for i := range r.Samples {
		s := SampleOf(&r.Samples[i])
		if s == nil {
			continue
		}
		rps = append(rps, s.PerSecond)
		if sh, err := latency.Decode(s.Histogram); err == nil {
			h.Merge(sh)
		}
	}
	if len(rps) == 0 {
		return
	}
	sum := &Summary{Latency: h.Summary()}
	sp := results.SpreadOf(rps)
	sum.MedianPerSecond, sum.MinPerSecond, sum.MaxPerSecond = sp.Median, sp.Min, sp.Max
	r.Payload = sum
}

// us is a duration in microseconds.
func us(d time.Duration) float64 { return float64(d) / 1e3 }

package handshake

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"kquic.dev/bench/results"
)

// Sample is what one sample of a handshake-mode cell measured over its
// window.
type Sample struct {
	// Concurrency is how many exchanges ran at once.
	Concurrency int `json:"concurrency"`
	// Handshakes counts the exchanges (connection, request, answer)
	// completed within the window, and PerSecond is their rate.
	Handshakes int64   `json:"handshakes"`
	PerSecond  float64 `json:"per_second"`
	// Resumed and Early count the exchanges that resumed a session, and
	// whose request the server accepted as 0-RTT data.
	Resumed int64 `json:"resumed"`
	Early   int64 `json:"early"`
	// TTFB is the distribution of the time from the start of the dial to
	// the first byte of the answer.
	TTFB Latency `json:"ttfb"`
	// TTFBHistogram is that distribution in microseconds, an HDR histogram
	// in its V2 compressed encoding (base64), for merging samples.
	TTFBHistogram string `json:"ttfb_histogram"`
}

// Latency is the percentiles of a distribution of durations, in
// microseconds (HDR histogram, 3 significant digits).
type Latency struct {
	Min  int64   `json:"min_us"`
	P50  int64   `json:"p50_us"`
	P90  int64   `json:"p90_us"`
	P99  int64   `json:"p99_us"`
	P999 int64   `json:"p99_9_us"`
	Max  int64   `json:"max_us"`
	Mean float64 `json:"mean_us"`
}

// Summary sums up a handshake-mode cell over its samples.
type Summary struct {
	// MedianPerSecond, MinPerSecond and MaxPerSecond are over the samples'
	// rates; Spread is the width of the median's interval at
	// SpreadConfidence over the median, and WideSpread flags one over
	// MaxSpread.
	MedianPerSecond float64 `json:"median_per_second"`
	MinPerSecond    float64 `json:"min_per_second"`
	MaxPerSecond    float64 `json:"max_per_second"`
	Spread          float64 `json:"spread"`
	WideSpread      bool    `json:"wide_spread,omitempty"`
	// Handshakes, Resumed and Early are over all samples.
	Handshakes int64 `json:"handshakes"`
	Resumed    int64 `json:"resumed"`
	Early      int64 `json:"early"`
	// TTFB is over every exchange of every sample (their histograms
	// merged).
	TTFB Latency `json:"ttfb"`
}

// Range of the TTFB histograms: 1µs to 2 minutes.
const ttfbMaxMicros = int64(2 * time.Minute / time.Microsecond)

// NewTTFBHistogram is an empty histogram of times to first byte in
// microseconds, 1 µs to 2 minutes, 3 significant digits.
func NewTTFBHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, ttfbMaxMicros, 3)
}

// LatencyOf is the percentiles of a TTFB histogram.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	return Latency{
		Min: h.Min(), P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(), Mean: h.Mean(),
	}
}

// payloadKey is the JSON key of the mode's figures, in a sample and in a
// cell.
const payloadKey = "handshake"

// PayloadKey is "handshake".
func (*Sample) PayloadKey() string { return payloadKey }

// PayloadKey is "handshake".
func (*Summary) PayloadKey() string { return payloadKey }

func init() {
	results.RegisterPayload(results.PayloadType{
		Key:       payloadKey,
		Sample:    func() results.Payload { return &Sample{} },
		Cell:      func() results.Payload { return &Summary{} },
		Summarize: summarize,
		Metric:    func(p results.Payload) (string, float64) { return "handshakes/s", p.(*Sample).PerSecond },
		Unit:      "handshakes/s",
		Named: []results.NamedFigure{{Name: "handshakes", Unit: "/s", About: "per second; handshake mode",
			Value: func(p results.Payload) float64 { return p.(*Sample).PerSecond }}},
	})
}

// SampleOf is the handshake figures of a sample, nil for a sample
// without.
func SampleOf(s *results.Sample) *Sample {
	p, _ := s.Payload.(*Sample)
	return p
}

// SummaryOf is the handshake summary of a cell, nil for a cell without.
func SummaryOf(r *results.CellResult) *Summary {
	p, _ := r.Payload.(*Summary)
	return p
}

// summarize computes a handshake-mode cell's summary in place of the
// goodput figures, which its samples do not have.
func summarize(r *results.CellResult) {
	r.MedianBps, r.MinBps, r.MaxBps, r.LowBps, r.HighBps, r.Spread, r.WideSpread = 0, 0, 0, 0, 0, 0, false
	sum := &Summary{}
	merged := NewTTFBHistogram()
	var rates []float64
	for i := range r.Samples {
		hs := SampleOf(&r.Samples[i])
		if hs == nil {
			continue
		}
		rates = append(rates, hs.PerSecond)
		sum.Handshakes += hs.Handshakes
		sum.Resumed += hs.Resumed
		sum.Early += hs.Early
		if h, err := hdrhistogram.Decode([]byte(hs.TTFBHistogram)); err == nil {
			merged.Merge(h)
		}
	}
	if len(rates) == 0 {
		return
	}
	sp := results.SpreadOf(rates)
	sum.MedianPerSecond, sum.MinPerSecond, sum.MaxPerSecond = sp.Median, sp.Min, sp.Max
	sum.Spread, sum.WideSpread = sp.Width, sp.Wide
	sum.TTFB = LatencyOf(merged)
	r.Payload = sum
	r.WideSpread = sum.WideSpread
}

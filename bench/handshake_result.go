//go:build linux

package bench

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"kquic.dev/bench/transport"
)

// HandshakeSample is what one sample of a handshake-mode cell measured over
// its window.
type HandshakeSample struct {
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

// HandshakeSummary sums up a handshake-mode cell over its samples.
type HandshakeSummary struct {
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

func newTTFBHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, ttfbMaxMicros, 3)
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	return Latency{
		Min: h.Min(), P50: h.ValueAtQuantile(50), P90: h.ValueAtQuantile(90), P99: h.ValueAtQuantile(99),
		P999: h.ValueAtQuantile(99.9), Max: h.Max(), Mean: h.Mean(),
	}
}

// newHandshakeSample records a sample's exchanges.
func newHandshakeSample(in []transport.Exchange, secs float64, concurrency int) (*HandshakeSample, error) {
	h := newTTFBHistogram()
	s := &HandshakeSample{Concurrency: concurrency, Handshakes: int64(len(in)), PerSecond: float64(len(in)) / secs}
	for _, e := range in {
		us := max(e.TTFB.Microseconds(), 1)
		if err := h.RecordValue(us); err != nil {
			return nil, fmt.Errorf("record a time to first byte of %v: %w", e.TTFB, err)
		}
		if e.Resumed {
			s.Resumed++
		}
		if e.Early {
			s.Early++
		}
	}
	s.TTFB = latencyOf(h)
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode the TTFB histogram: %w", err)
	}
	s.TTFBHistogram = string(enc)
	return s, nil
}

// summarizeHandshakes computes a handshake-mode cell's summary.
func (r *CellResult) summarizeHandshakes() {
	sum := &HandshakeSummary{}
	merged := newTTFBHistogram()
	var rates []float64
	for _, s := range r.Samples {
		hs := s.Handshake
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
	sp := spreadOf(rates)
	sum.MedianPerSecond, sum.MinPerSecond, sum.MaxPerSecond = sp.Median, sp.Min, sp.Max
	sum.Spread, sum.WideSpread = sp.Width, sp.Wide
	sum.TTFB = latencyOf(merged)
	r.Handshake = sum
	r.WideSpread = sum.WideSpread
}

// handshakeSummaryLine is a handshake-mode cell's line in the run's log.
func handshakeSummaryLine(r *CellResult) string {
	h := r.Handshake
	s := fmt.Sprintf("%.0f handshakes/s (median of %d, spread %.0f%%), TTFB p50 %s p99 %s",
		h.MedianPerSecond, len(r.Samples), h.Spread*100, ms(h.TTFB.P50), ms(h.TTFB.P99))
	if h.WideSpread {
		s += " WIDE SPREAD"
	}
	return s
}

// ms formats microseconds as milliseconds.
func ms(us int64) string {
	return fmt.Sprintf("%.2f ms", float64(us)/1000)
}

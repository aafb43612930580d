//go:build linux

package handshake

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/transport"
)

// newHandshakeSample records a sample's exchanges.
func newHandshakeSample(in []transport.Exchange, secs float64, concurrency int) (*Sample, error) {
	h := NewTTFBHistogram()
	s := &Sample{Concurrency: concurrency, Handshakes: int64(len(in)), PerSecond: float64(len(in)) / secs}
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
	s.TTFB = LatencyOf(h)
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode the TTFB histogram: %w", err)
	}
	s.TTFBHistogram = string(enc)
	return s, nil
}

// Summary is the handshakes per second's median and the time to first
// byte's percentiles.
func (Mode) Summary(r *results.CellResult) string {
	h := SummaryOf(r)
	if h == nil {
		return "no handshakes recorded"
	}
	return mode.SummaryOf(fmt.Sprintf("%.0f handshakes/s", h.MedianPerSecond), len(r.Samples), h.Spread, h.WideSpread,
		fmt.Sprintf(", TTFB p50 %s p99 %s", ms(h.TTFB.P50), ms(h.TTFB.P99)))
}

// ms formats microseconds as milliseconds.
func ms(us int64) string {
	return fmt.Sprintf("%.2f ms", float64(us)/1000)
}

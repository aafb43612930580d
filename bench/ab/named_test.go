package ab

import (
	"strings"
	"testing"

	"kquic.dev/bench/results"
)

// taps is a test mode's figures: a count per sample, named "taps".
type taps struct{ N int }

func (*taps) PayloadKey() string { return "taps" }

func init() {
	results.RegisterPayload(results.PayloadType{
		Key:     "taps",
		Sample:  func() results.Payload { return &taps{} },
		Figures: []results.Figure{{Name: "taps", Value: func(p results.Payload) float64 { return float64(p.(*taps).N) }}},
		Named: []results.NamedFigure{{Name: "taps", Unit: "taps", About: "taps; the test mode", LowerBetter: true,
			Value: func(p results.Payload) float64 { return float64(p.(*taps).N) }}},
	})
}

// TestNamedMetric: a mode's named figure is a metric by its name, read
// from its samples alone; the goodput is not read from them, the mode's
// figure being its own.
func TestNamedMetric(t *testing.T) {
	if !strings.Contains(MetricNames(), "taps (taps; the test mode)") {
		t.Errorf("metric names: %s", MetricNames())
	}
	m, err := ParseMetric("taps")
	if err != nil || m.Unit != "taps" || !m.LowerBetter {
		t.Fatalf("taps: %+v, %v", m, err)
	}
	mine := results.Sample{Bytes: 1e6, Seconds: 1, Bps: 8e6, Payload: &taps{N: 7}}
	plain := results.Sample{Bytes: 1e6, Seconds: 1, Bps: 8e6}
	if v, ok := m.Value(mine); !ok || v != 7 {
		t.Errorf("taps of a sample with 7: %v, %v", v, ok)
	}
	if _, ok := m.Value(plain); ok {
		t.Error("taps of a sample without any")
	}
	g, _ := ParseMetric("goodput")
	if _, ok := g.Value(mine); ok {
		t.Error("the goodput of a sample whose figure is its own")
	}
	if v, ok := g.Value(plain); !ok || v != 8 {
		t.Errorf("the goodput of a plain sample: %v, %v", v, ok)
	}
}

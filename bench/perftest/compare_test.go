//go:build linux

package perftest

import (
	"math"
	"strings"
	"testing"
)

func TestParseThroughput(t *testing.T) {
	for out, want := range map[string]float64{
		"Running in THROUGHPUT mode\nThroughput:       95.4 Mbits/sec\n":                              95.4,
		"Throughput:       512.0 Kbits/sec\n":                                                         0.5,
		"33554432 bytes in 1024-byte messages in 2.9s: 88.8 Mbits/sec (perf_test's units), 11.6 MB/s": 88.8,
	} {
		got, err := parseThroughput([]byte(out))
		if err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("parseThroughput(%q) = %v, %v; want %v", out, got, err, want)
		}
	}
	if _, err := parseThroughput([]byte("socket create failed\n")); err == nil || !strings.Contains(err.Error(), "socket create failed") {
		t.Errorf("no throughput: %v, want an error quoting the output", err)
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if s.N != 8 || s.Mean != 5 || s.Median != 4.5 || math.Abs(s.SD-2.138) > 0.001 || math.Abs(s.SE-s.SD/math.Sqrt(8)) > 1e-12 {
		t.Errorf("Summarize = %+v", s)
	}
	if s := Summarize([]float64{3, 1, 2}); s.Median != 2 || s.Mean != 2 {
		t.Errorf("odd count: %+v", s)
	}
}

func TestWriteTableLeavesOutCClientsAbove4KiB(t *testing.T) {
	r := &CompareResult{Options: CompareOptions{Sizes: []int{1024, 65536}, Runs: 2, Total: 1 << 20}, Runs: map[int]map[Pairing][]float64{
		1024:  {Pairings[0]: {100, 110}, Pairings[1]: {105, 105}, Pairings[2]: {90, 100}, Pairings[3]: {80, 90}},
		65536: {Pairings[1]: {120, 120}, Pairings[3]: {110, 112}},
	}}
	var b strings.Builder
	r.WriteTable(&b)
	out := b.String()
	for _, want := range []string{"105.0 +- 7.1, med 105.0, 1.00", "85.0 +- 7.1, med 85.0, 0.81", "n/a (C client", "111.0 +- 1.4"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

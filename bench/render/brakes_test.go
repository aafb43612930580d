package render_test

import (
	"bytes"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// TestWindowBrake: under a 100 ms delay a 64 KiB window bounds a QUIC cell
// at 5.2 Mbit/s; a cell at half of that or more is called window-limited
// and one below is not; an 8 MiB window's bound is far above the goodput;
// TCP, which autotunes its window, and a run with no delay get no window
// brake.
func TestWindowBrake(t *testing.T) {
	const bound = 64 << 10 * 8 / 0.1 // bit/s
	for _, tc := range []struct {
		transport, netem string
		window           int
		bps              float64
		brake, limited   bool
	}{
		{"quic-go", "delay=100ms", 64 << 10, 0.9 * bound, true, true},
		{"kquic", "delay=100ms", 64 << 10, 0.5 * bound, true, true},
		{"quic-go", "delay=100ms", 64 << 10, 0.49 * bound, true, false},
		{"quic-go", "delay=100ms", 8 << 20, 0.9 * bound, true, false},
		{"tcp", "delay=100ms", 64 << 10, 0.9 * bound, false, false},
		{"quic-go", "", 64 << 10, 0.9 * bound, false, false},
	} {
		d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Transports: []string{tc.transport},
			Sizes: []int{64 << 10}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true},
			Directions: []matrix.Direction{matrix.Up}, Streams: 1, Repeat: 1, Netem: tc.netem, Window: tc.window}}
		c := results.CellResult{Cell: d.Spec.Cells()[0], Status: results.StatusOK, MedianBps: tc.bps}
		c.Key = c.Cell.Key()
		d.Cells = []results.CellResult{c}
		var got []render.Brake
		for _, b := range render.Brakes(d) {
			if b.Kind == "window" {
				got = append(got, b)
			}
		}
		name := tc.transport + " " + tc.netem
		if !tc.brake {
			if len(got) != 0 {
				t.Errorf("%s: a window brake: %s", name, got[0].Text)
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("%s, window %d, %.1f Mbit/s: %d window brakes, want 1", name, tc.window, tc.bps/1e6, len(got))
		}
		b := got[0]
		if want := float64(tc.window) * 8 / 0.1; b.Bound != want || b.Key != c.Key {
			t.Errorf("%s: bound %.0f for %q, want %.0f for %q", name, b.Bound, b.Key, want, c.Key)
		}
		if b.Limited != tc.limited || strings.Contains(b.Text, "WINDOW-LIMITED") != tc.limited {
			t.Errorf("%s, window %d, %.1f Mbit/s: limited %v (%s), want %v", name, tc.window, tc.bps/1e6, b.Limited, b.Text, tc.limited)
		}
		var out bytes.Buffer
		if err := render.WriteExplain(&out, d); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), b.Text) {
			t.Errorf("%s: the explanation lacks the brake %q:\n%s", name, b.Text, out.String())
		}
	}
}

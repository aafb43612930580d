//go:build linux

package kquic

import (
	"strings"
	"testing"

	"kquic.dev/internal/quicabi"
)

// TestDifferences: applyTransport's read-back check names every field the
// kernel did not take, and only fields that were asked for.
func TestDifferences(t *testing.T) {
	want := quicabi.TransportParam{MaxStreamsBidi: 4, GreaseQUICBit: true, MaxIdleTimeout: 5_000_000}
	got := quicabi.TransportParam{MaxStreamsBidi: 100, GreaseQUICBit: false, MaxIdleTimeout: 5_000_000, MaxData: 99}
	d := differences(want, got)
	if len(d) != 2 || !strings.Contains(strings.Join(d, ";"), "MaxStreamsBidi: asked 4, kernel has 100") || !strings.Contains(strings.Join(d, ";"), "GreaseQUICBit") {
		t.Errorf("differences = %q", d)
	}
	if d := differences(quicabi.TransportParam{}, got); len(d) != 0 {
		t.Errorf("zero (unchanged) fields reported: %q", d)
	}
}

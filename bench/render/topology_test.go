package render_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// TestTopologyLine: a run between two guests on one host says so above its
// tables, with both kernels' boot IDs, both ends' modules and the driver,
// so that nobody takes it for two machines; other runs print no such line.
func TestTopologyLine(t *testing.T) {
	d, err := results.Load(filepath.Join("testdata", "results", "bulk-old.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	render.WriteTables(&plain, d)
	if strings.Contains(plain.String(), results.TopologyGuestPair) {
		t.Fatalf("a veth run's tables speak of two guests:\n%s", plain.String())
	}
	d.Env.GuestPair = &results.GuestPair{Link: "tap", LinkMTU: 1500, LinkQueues: 1, Accel: "tcg",
		Client: results.PairGuest{Name: "A", Kernel: "7.3.4", BootID: "aaaaaaaa-1111", Driver: "virtio_net",
			Modules: []results.PairModule{{Name: "quic", BuildID: "0123456789abcdef"}}, IRQs: []results.PairIRQ{{IRQ: 27, Name: "virtio1-input.0", Count: 40}, {IRQ: 28, Count: 2}}},
		Server: results.PairGuest{Name: "B", Kernel: "7.3.5", BootID: "bbbbbbbb-2222", Driver: "virtio_net"},
	}
	var b bytes.Buffer
	render.WriteTables(&b, d)
	first, _, _ := strings.Cut(b.String(), "\n")
	for _, want := range []string{"two guests on one host, not two machines", "tap link", "7.3.4 boot aaaaaaaa quic 0123456789ab", "7.3.5 boot bbbbbbbb no out-of-tree module", "virtio_net", "42 and 0 interrupts"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line %q lacks %q", first, want)
		}
	}
}

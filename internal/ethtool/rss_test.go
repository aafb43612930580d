//go:build linux

package ethtool

import (
	"testing"
	"unsafe"
)

// TestRSSStructSizes pins the structs of rss.go to <linux/ethtool.h>.
func TestRSSStructSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"ethtool_rxfh", unsafe.Sizeof(rxfhHeader{}), 24},
		{"ethtool_rxfh.hfunc", unsafe.Offsetof(rxfhHeader{}.hfunc), 16},
		{"ethtool_rxnfc", unsafe.Sizeof(rxnfc{}), 192},
		{"ethtool_rxnfc.data", unsafe.Offsetof(rxnfc{}.data), 8},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	for f, want := range map[uint8]string{1: "toeplitz", 2: "xor", 4: "crc32", 5: "toeplitz+crc32", 0: "0x0", 0x10: "0x10"} {
		if got := hashFuncName(f); got != want {
			t.Errorf("hash function bits %#x: %q, want %q", f, got, want)
		}
	}
}

//go:build linux

package ethtool

import (
	"testing"
	"unsafe"
)

// TestStructSizes pins the command structs to <linux/ethtool.h>.
func TestStructSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"ethtool_drvinfo", unsafe.Sizeof(drvInfo{}), 196},
		{"ethtool_drvinfo.n_priv_flags", unsafe.Offsetof(drvInfo{}.nPrivFlags), 176},
		{"ethtool_drvinfo.regdump_len", unsafe.Offsetof(drvInfo{}.regdumpLen), 192},
		{"ethtool_ringparam", unsafe.Sizeof([9]uint32{}), 36},
		{"ethtool_channels", unsafe.Sizeof([9]uint32{}), 36},
		{"ethtool_coalesce", unsafe.Sizeof([23]uint32{}), 92},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

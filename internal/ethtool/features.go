//go:build linux

package ethtool

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The device features by name, as `ethtool -k` lists them
// ("tx-udp-segmentation", "tx-udp_tnl-segmentation", ...): the legacy
// switches (TSO, GSO, GRO) group several of them, and some, such as UDP
// segmentation, have no switch of their own.
const (
	ethSSFeatures  = 4  // ETH_SS_FEATURES
	ethGstringLen  = 32 // ETH_GSTRING_LEN
	featuresPerBlk = 32 // features per ethtool_get_features_block
)

// featureIndex is the bit of the named feature in the device's feature
// words (ETHTOOL_GSSET_INFO and ETHTOOL_GSTRINGS of ETH_SS_FEATURES), and
// the number of features.
func featureIndex(dev, name string) (idx, count int, err error) {
	// struct ethtool_sset_info { u32 cmd, reserved; u64 sset_mask; u32 data[1]; }
	info := struct {
		cmd, reserved uint32
		mask          uint64
		data          uint32
	}{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSFeatures}
	if err := callPtr(dev, unsafe.Pointer(&info)); err != nil {
		return 0, 0, fmt.Errorf("ethtool: feature names of %s: %w", dev, err)
	}
	if info.mask == 0 || info.data == 0 {
		return 0, 0, fmt.Errorf("ethtool: %s lists no features", dev)
	}
	count = int(info.data)
	// struct ethtool_gstrings { u32 cmd, string_set, len; u8 data[]; }
	buf := make([]uint32, 3+count*ethGstringLen/4)
	buf[0], buf[1], buf[2] = unix.ETHTOOL_GSTRINGS, ethSSFeatures, uint32(count)
	if err := callPtr(dev, unsafe.Pointer(&buf[0])); err != nil {
		return 0, 0, fmt.Errorf("ethtool: feature names of %s: %w", dev, err)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[3])), count*ethGstringLen)
	for i := range count {
		s := b[i*ethGstringLen : (i+1)*ethGstringLen]
		n := 0
		for n < len(s) && s[n] != 0 {
			n++
		}
		if string(s[:n]) == name {
			return i, count, nil
		}
	}
	return 0, 0, fmt.Errorf("ethtool: %s has no feature %q (see ethtool -k %s)", dev, name, dev)
}

// Feature reports whether the named feature is active on the device, and
// whether it can be changed.
func Feature(dev, name string) (active, changeable bool, err error) {
	idx, count, err := featureIndex(dev, name)
	if err != nil {
		return false, false, err
	}
	blocks := (count + featuresPerBlk - 1) / featuresPerBlk
	// struct ethtool_gfeatures { u32 cmd, size; struct { u32 available, requested, active, never_changed; } features[]; }
	buf := make([]uint32, 2+4*blocks)
	buf[0], buf[1] = unix.ETHTOOL_GFEATURES, uint32(blocks)
	if err := callPtr(dev, unsafe.Pointer(&buf[0])); err != nil {
		return false, false, fmt.Errorf("ethtool: features of %s: %w", dev, err)
	}
	blk, bit := idx/featuresPerBlk, uint32(1)<<(idx%featuresPerBlk)
	f := buf[2+4*blk : 2+4*blk+4]
	return f[2]&bit != 0, f[0]&bit != 0 && f[3]&bit == 0, nil
}

// SetFeature switches the named feature (e.g. "tx-udp-segmentation") on
// or off, as `ethtool -K dev name on|off` does, and checks that it took.
func SetFeature(dev, name string, on bool) error {
	idx, count, err := featureIndex(dev, name)
	if err != nil {
		return err
	}
	blocks := (count + featuresPerBlk - 1) / featuresPerBlk
	// struct ethtool_sfeatures { u32 cmd, size; struct { u32 valid, requested; } features[]; }
	buf := make([]uint32, 2+2*blocks)
	buf[0], buf[1] = unix.ETHTOOL_SFEATURES, uint32(blocks)
	blk, bit := idx/featuresPerBlk, uint32(1)<<(idx%featuresPerBlk)
	buf[2+2*blk] = bit
	if on {
		buf[2+2*blk+1] = bit
	}
	// A positive return (ETHTOOL_F_WISH and co.) is not an errno: read
	// the result back instead.
	if err := callPtr(dev, unsafe.Pointer(&buf[0])); err != nil {
		return fmt.Errorf("ethtool: set %s of %s to %v: %w", name, dev, on, err)
	}
	active, _, err := Feature(dev, name)
	if err != nil {
		return err
	}
	if active != on {
		return fmt.Errorf("ethtool: set %s of %s to %v: the device keeps it %v (fixed, or it depends on another feature)", name, dev, on, active)
	}
	return nil
}

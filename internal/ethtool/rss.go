//go:build linux

package ethtool

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The ABI of <linux/ethtool.h> that reads where a device spreads its
// received flows: its RSS hash function, key and indirection table
// (ETHTOOL_GRSSH), the header fields it hashes per flow type
// (ETHTOOL_GRXFH), and its statistics by name (ETHTOOL_GSTRINGS,
// ETHTOOL_GSTATS), which carry the per-queue packet counts. Every struct
// is pinned to the header's sizes by TestRSSStructSizes.
const (
	cmdGetStrings = 0x1b // ETHTOOL_GSTRINGS
	cmdGetStats   = 0x1d // ETHTOOL_GSTATS
	cmdGetRXFH    = 0x29 // ETHTOOL_GRXFH
	cmdGetRSSH    = 0x46 // ETHTOOL_GRSSH

	stringSetStats = 1  // ETH_SS_STATS
	stringLen      = 32 // ETH_GSTRING_LEN
)

// Flow types of ETHTOOL_GRXFH.
const (
	FlowTCP4 = 0x01 // TCP_V4_FLOW
	FlowUDP4 = 0x02 // UDP_V4_FLOW
	FlowTCP6 = 0x05 // TCP_V6_FLOW
	FlowUDP6 = 0x06 // UDP_V6_FLOW
)

// rxfhHeader is struct ethtool_rxfh without its rss_config[] (24 bytes).
type rxfhHeader struct {
	cmd        uint32
	rssContext uint32
	indirSize  uint32
	keySize    uint32
	hfunc      uint8
	inputXfrm  uint8
	_          [2]uint8
	_          uint32
}

// rxnfc is struct ethtool_rxnfc (192 bytes on 64-bit Linux): the command,
// the flow type and the hash fields (data); its flow spec and rule count
// are not used here.
type rxnfc struct {
	cmd      uint32
	flowType uint32
	data     uint64
	_        [168]byte // struct ethtool_rx_flow_spec
	_        uint32    // rule_cnt / rss_context
	_        uint32    // padding to the 8-byte alignment
}

// RSS is a device's receive-side scaling: its hash function, key and
// indirection table (`ethtool -x`).
type RSS struct {
	// HashFunc names the hash function ("toeplitz", "xor", "crc32", or
	// the bits of one this package does not name).
	HashFunc string `json:"hash_func"`
	// Key is the hash key, in hex.
	Key string `json:"key,omitempty"`
	// Indirection is the table: entry i is the receive queue of the
	// packets whose hash is i modulo its length.
	Indirection []uint32 `json:"indirection,omitempty"`
}

// hashFuncs are ETH_RSS_HASH_TOP, _XOR, _CRC32 by bit.
var hashFuncs = []string{"toeplitz", "xor", "crc32"}

// GetRSS reads the device's RSS hash function, key and indirection table
// (ETHTOOL_GRSSH: once for the sizes, once for the contents).
func GetRSS(dev string) (RSS, error) {
	h := rxfhHeader{cmd: cmdGetRSSH}
	if err := get(dev, "RSS settings", unsafe.Pointer(&h)); err != nil {
		return RSS{}, err
	}
	hdr := int(unsafe.Sizeof(h))
	if h.indirSize > 1<<16 || h.keySize > 1<<10 {
		return RSS{}, fmt.Errorf("ethtool: RSS settings of %s: an indirection table of %d and a key of %d bytes", dev, h.indirSize, h.keySize)
	}
	// The header and rss_config (indirection entries, then the key) in
	// one buffer of uint64s, aligned for the header's fields.
	n := hdr + 4*int(h.indirSize) + int(h.keySize)
	buf := make([]uint64, (n+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n)
	*(*rxfhHeader)(unsafe.Pointer(&buf[0])) = rxfhHeader{cmd: cmdGetRSSH, indirSize: h.indirSize, keySize: h.keySize}
	if err := get(dev, "RSS settings", unsafe.Pointer(&buf[0])); err != nil {
		return RSS{}, err
	}
	got := *(*rxfhHeader)(unsafe.Pointer(&buf[0]))
	r := RSS{HashFunc: hashFuncName(got.hfunc)}
	cfg := b[hdr:]
	for i := 0; i < int(got.indirSize) && 4*i+4 <= len(cfg); i++ {
		r.Indirection = append(r.Indirection, binary.NativeEndian.Uint32(cfg[4*i:]))
	}
	if key := cfg[4*int(h.indirSize):]; len(key) > 0 && int(got.keySize) <= len(key) {
		r.Key = fmt.Sprintf("%x", key[:got.keySize])
	}
	return r, nil
}

// hashFuncName names the ETH_RSS_HASH_* bits set in f.
func hashFuncName(f uint8) string {
	var names []string
	for i, n := range hashFuncs {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if rest := f &^ (1<<len(hashFuncs) - 1); rest != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("0x%x", rest))
	}
	return strings.Join(names, "+")
}

// hashFields are the RXH_* bits of ETHTOOL_GRXFH's data, by bit.
var hashFields = map[uint64]string{
	1 << 1: "l2-dst", 1 << 2: "vlan", 1 << 3: "l3-proto", 1 << 4: "src-ip", 1 << 5: "dst-ip",
	1 << 6: "src-port", 1 << 7: "dst-port", 1 << 31: "discard",
}

// GetFlowHash reads the header fields the device hashes to pick a
// packet's receive queue for a flow type (FlowTCP4, ...), as `ethtool -n
// DEV rx-flow-hash tcp4` lists them ("src-ip,dst-ip,src-port,dst-port";
// "" when it hashes none).
func GetFlowHash(dev string, flowType uint32) (string, error) {
	v := rxnfc{cmd: cmdGetRXFH, flowType: flowType}
	if err := get(dev, "flow hash", unsafe.Pointer(&v)); err != nil {
		return "", err
	}
	var names []string
	for _, bit := range []uint64{1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 31} {
		if v.data&bit != 0 {
			names = append(names, hashFields[bit])
		}
	}
	return strings.Join(names, ","), nil
}

// GetStats reads the device's statistics by name (`ethtool -S`): the
// count from the driver info, the names (ETHTOOL_GSTRINGS), then the
// values (ETHTOOL_GSTATS).
func GetStats(dev string) (map[string]uint64, error) {
	di := drvInfo{cmd: cmdGetDrvInfo}
	if err := get(dev, "driver info", unsafe.Pointer(&di)); err != nil {
		return nil, err
	}
	n := int(di.nStats)
	if n == 0 {
		return nil, fmt.Errorf("ethtool: statistics of %s: %w", dev, ErrNotSupported)
	}
	if n > 1<<16 {
		return nil, fmt.Errorf("ethtool: statistics of %s: %d of them", dev, n)
	}
	// struct ethtool_gstrings: cmd, string_set, len, then len names.
	sb := make([]uint32, 3+n*stringLen/4)
	sb[0], sb[1], sb[2] = cmdGetStrings, stringSetStats, uint32(n)
	if err := get(dev, "statistics' names", unsafe.Pointer(&sb[0])); err != nil {
		return nil, err
	}
	names := unsafe.Slice((*byte)(unsafe.Pointer(&sb[3])), n*stringLen)
	// struct ethtool_stats: cmd, n_stats, then n_stats u64 values.
	vb := make([]uint64, 1+n)
	*(*[2]uint32)(unsafe.Pointer(&vb[0])) = [2]uint32{cmdGetStats, uint32(n)}
	if err := get(dev, "statistics", unsafe.Pointer(&vb[0])); err != nil {
		return nil, err
	}
	got := int((*(*[2]uint32)(unsafe.Pointer(&vb[0])))[1])
	out := make(map[string]uint64, n)
	for i := 0; i < min(n, got, int(sb[2])); i++ {
		out[unix.ByteSliceToString(names[i*stringLen:(i+1)*stringLen])] = vb[1+i]
	}
	return out, nil
}

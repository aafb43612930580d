//go:build linux

package ethtool

// More legacy offload switches (from <linux/ethtool.h>): checksumming and
// scatter-gather, which TSO and GSO depend on.
var (
	RXCSUM = Offload{"rx-checksum", 0x14, 0x15} // ETHTOOL_GRXCSUM / ETHTOOL_SRXCSUM
	TXCSUM = Offload{"tx-checksum", 0x16, 0x17} // ETHTOOL_GTXCSUM / ETHTOOL_STXCSUM
	SG     = Offload{"sg", 0x18, 0x19}          // ETHTOOL_GSG / ETHTOOL_SSG
)

// Offloads are the switches this package knows, in `ethtool -k` order of
// importance for a benchmark.
var Offloads = []Offload{TSO, GSO, GRO, TXCSUM, RXCSUM, SG}

// OffloadByName finds one of Offloads by its Name ("tso", "tx-checksum").
func OffloadByName(name string) (Offload, bool) {
	for _, o := range Offloads {
		if o.Name == name {
			return o, true
		}
	}
	return Offload{}, false
}

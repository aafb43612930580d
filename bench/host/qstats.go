//go:build linux

package host

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// The netdev generic netlink family's queue statistics (<linux/netdev.h>,
// Linux 6.9 and later): the packets of each queue of a device, which
// drivers such as virtio-net report there rather than in ethtool -S.
const (
	netdevFamily      = "netdev"
	netdevCmdQstats   = 12 // NETDEV_CMD_QSTATS_GET
	qstatsIfindex     = 1  // NETDEV_A_QSTATS_IFINDEX
	qstatsQueueType   = 2  // NETDEV_A_QSTATS_QUEUE_TYPE
	qstatsQueueID     = 3  // NETDEV_A_QSTATS_QUEUE_ID
	qstatsScope       = 4  // NETDEV_A_QSTATS_SCOPE
	qstatsRxPackets   = 8  // NETDEV_A_QSTATS_RX_PACKETS
	qstatsTxPackets   = 10 // NETDEV_A_QSTATS_TX_PACKETS
	qstatsScopeQueue  = 1  // NETDEV_QSTATS_SCOPE_QUEUE
	netdevQueueTypeRx = 0  // NETDEV_QUEUE_TYPE_RX
)

// queueStats reads the packets of each queue of dev ("rx-0": n) from the
// netdev family's queue statistics, in the caller's network namespace.
func queueStats(dev string) (map[string]uint64, error) {
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, err
	}
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("netdev netlink: %w", err)
	}
	defer c.Close()
	fam, err := c.GetFamily(netdevFamily)
	if err != nil {
		return nil, fmt.Errorf("netdev netlink family (Linux 6.9 or later): %w", err)
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(qstatsIfindex, uint32(ifi.Index))
	ae.Uint32(qstatsScope, qstatsScopeQueue)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	msgs, err := c.Execute(genetlink.Message{Header: genetlink.Header{Command: netdevCmdQstats, Version: fam.Version}, Data: b},
		fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("netdev queue statistics of %s: %w", dev, err)
	}
	out := map[string]uint64{}
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return nil, err
		}
		var typ, id uint32
		var rx, tx uint64
		var hasRx, hasTx bool
		for ad.Next() {
			switch ad.Type() {
			case qstatsQueueType:
				typ = ad.Uint32()
			case qstatsQueueID:
				id = ad.Uint32()
			case qstatsRxPackets:
				rx, hasRx = uintAttr(ad.Bytes())
			case qstatsTxPackets:
				tx, hasTx = uintAttr(ad.Bytes())
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		switch {
		case typ == netdevQueueTypeRx && hasRx:
			out[fmt.Sprintf("rx-%d", id)] = rx
		case typ != netdevQueueTypeRx && hasTx:
			out[fmt.Sprintf("tx-%d", id)] = tx
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("netdev queue statistics of %s: none reported", dev)
	}
	return out, nil
}

// uintAttr decodes a netlink "uint" attribute (4 or 8 bytes, host order).
func uintAttr(b []byte) (uint64, bool) {
	switch len(b) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), true
	case 8:
		return binary.NativeEndian.Uint64(b), true
	}
	return 0, false
}

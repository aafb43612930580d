//go:build linux

package topo

import (
	"fmt"

	"kquic.dev/internal/ethtool"
)

// vethUDPSegmentation are the UDP segmentation offloads a veth device
// claims: UDP GSO (UDP_SEGMENT) and UDP-tunnel GSO. The legacy TSO and GSO
// switches do not cover them, so with only those off a UDP GSO
// super-packet (quic-go's, or kernel QUIC's with GSO) still reaches the
// veth whole, and its peer takes in one 64 KiB packet where a NIC would
// have put dozens of frames on the wire.
var vethUDPSegmentation = []string{"tx-udp-segmentation", "tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation"}

// segmentUDPInSoftware turns the device's UDP segmentation offloads off,
// so the stack segments UDP super-packets at the sending device as it does
// TCP's with TSO off: the receiver then gets one datagram per segment, as
// from a NIC with UDP segmentation offload (or without it). It is for veth
// ends only; a NIC's offloads are its hardware's and stay as they are.
func (d *Device) segmentUDPInSoftware() error {
	return d.Do(func() error {
		for _, f := range vethUDPSegmentation {
			on, changeable, err := ethtool.Feature(d.name, f)
			if err != nil {
				return fmt.Errorf("topology: %w", err)
			}
			if !on {
				continue
			}
			if !changeable {
				return fmt.Errorf("topology: %s on %s is fixed on: UDP super-packets would pass the device whole", f, d.name)
			}
			if err := ethtool.SetFeature(d.name, f, false); err != nil {
				return fmt.Errorf("topology: %w", err)
			}
		}
		return nil
	})
}

// udpSegmentation reports the device's UDP segmentation offload for the
// record ("tx-udp-segmentation=false"), or "" where it has none.
func (d *Device) udpSegmentation() string {
	var s string
	d.Do(func() error {
		if on, _, err := ethtool.Feature(d.name, vethUDPSegmentation[0]); err == nil {
			s = fmt.Sprintf("%s=%v", vethUDPSegmentation[0], on)
		}
		return nil
	})
	return s
}

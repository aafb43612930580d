//go:build linux

package capture

import (
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// SizeBounds are the inclusive upper bounds (bytes of the captured frame,
// Ethernet header included) of the size histogram; one more bucket holds
// larger frames (GSO super-packets).
var SizeBounds = []int{100, 300, 600, 1280, 1514, 3000, 9014, 16384, 32768, 65549}

// Dir counts one direction.
type Dir struct {
	// Packets and Bytes are frames as the device passed them (a GSO
	// super-packet counts once, with its full length).
	Packets, Bytes uint64
	// Segments is what those frames are on a real wire: a super-packet
	// counts as its number of segments.
	Segments uint64
	// Sizes is the frame size histogram (SizeBounds).
	Sizes []uint64
	// QUICLong and QUICShort count UDP datagrams (segments) whose first
	// payload byte has the QUIC long (0x80) or short (0x40 only) form.
	// A datagram of coalesced packets counts by its first packet.
	QUICLong, QUICShort uint64
	// TCPAckOnly counts TCP segments with ACK and no payload, SYN, FIN or
	// RST; TCPData those with payload.
	TCPAckOnly, TCPData uint64
}

// Stats is what Stop reports.
type Stats struct {
	Tx, Rx Dir
	// KernelDrops is what the socket lost (PACKET_STATISTICS tp_drops):
	// if not 0, the counts above are short by that many.
	KernelDrops uint64
	// Unread is set when Stop gave up draining the packets queued before
	// it (the reader fell behind the traffic): the counts are short.
	Unread bool
	// Outside counts the packets read but left out of the counts: before
	// Begin, or after End or Stop (the file has them).
	Outside uint64
	// LateBegin is by how much Begin came after the instant it set: the
	// packets of the window read in between are missing from the counts.
	LateBegin time.Duration
	// File and KeyFile are the pcapng and key log written ("" if none).
	File, KeyFile string
}

// Flat names every count "wire.<dir>_<counter>", e.g. "wire.tx_packets",
// "wire.rx_quic_short", "wire.tx_size.le1514", "wire.kernel_drops".
func (s Stats) Flat() map[string]float64 {
	out := map[string]float64{"wire.kernel_drops": float64(s.KernelDrops)}
	if s.Unread {
		out["wire.unread"] = 1
	}
	out["wire.outside_window"] = float64(s.Outside)
	for _, d := range []struct {
		name string
		d    *Dir
	}{{"tx", &s.Tx}, {"rx", &s.Rx}} {
		p := "wire." + d.name + "_"
		out[p+"packets"] = float64(d.d.Packets)
		out[p+"bytes"] = float64(d.d.Bytes)
		out[p+"segments"] = float64(d.d.Segments)
		out[p+"quic_long"] = float64(d.d.QUICLong)
		out[p+"quic_short"] = float64(d.d.QUICShort)
		out[p+"tcp_ack_only"] = float64(d.d.TCPAckOnly)
		out[p+"tcp_data"] = float64(d.d.TCPData)
		for i, n := range d.d.Sizes {
			out["wire."+d.name+"_size."+bucketName(i)] = float64(n)
		}
	}
	return out
}

func bucketName(i int) string {
	if i < len(SizeBounds) {
		return fmt.Sprintf("le%d", SizeBounds[i])
	}
	return fmt.Sprintf("gt%d", SizeBounds[len(SizeBounds)-1])
}

func bucket(n int) int {
	for i, b := range SizeBounds {
		if n <= b {
			return i
		}
	}
	return len(SizeBounds)
}

// decoder decodes Ethernet/IP/UDP/TCP headers without allocating.
type decoder struct {
	eth     layers.Ethernet
	ip4     layers.IPv4
	ip6     layers.IPv6
	udp     layers.UDP
	tcp     layers.TCP
	payload gopacket.Payload
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newDecoder() *decoder {
	d := &decoder{}
	d.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &d.eth, &d.ip4, &d.ip6, &d.udp, &d.tcp, &d.payload)
	d.parser.IgnoreUnsupported = true
	return d
}

// decode decodes a frame's headers (for write's splitUDP).
func (d *decoder) decode(frame []byte) { _ = d.parser.DecodeLayers(frame, &d.decoded) }

// count adds one frame (gsoSize > 0: a super-packet of that segment size).
func (d *decoder) count(dir *Dir, frame []byte, length int, gsoSize int) {
	if dir.Sizes == nil {
		dir.Sizes = make([]uint64, len(SizeBounds)+1)
	}
	dir.Packets++
	dir.Bytes += uint64(length)
	dir.Sizes[bucket(length)]++
	d.decode(frame)
	var isUDP, isTCP bool
	for _, t := range d.decoded {
		switch t {
		case layers.LayerTypeUDP:
			isUDP = true
		case layers.LayerTypeTCP:
			isTCP = true
		}
	}
	segs := 1
	switch {
	case isUDP:
		pl := d.udp.Payload
		if gsoSize > 0 && len(pl) > gsoSize {
			segs = (len(pl) + gsoSize - 1) / gsoSize
			for off := 0; off < len(pl); off += gsoSize {
				quicForm(dir, pl[off:])
			}
		} else {
			quicForm(dir, pl)
		}
	case isTCP:
		if n := len(d.tcp.Payload); n > 0 {
			if gsoSize > 0 && n > gsoSize {
				segs = (n + gsoSize - 1) / gsoSize
			}
			dir.TCPData += uint64(segs)
		} else if d.tcp.ACK && !d.tcp.SYN && !d.tcp.FIN && !d.tcp.RST {
			dir.TCPAckOnly++
		}
	}
	dir.Segments += uint64(segs)
}

func quicForm(dir *Dir, pl []byte) {
	if len(pl) == 0 {
		return
	}
	switch {
	case pl[0]&0x80 != 0:
		dir.QUICLong++
	case pl[0]&0x40 != 0:
		dir.QUICShort++
	}
}

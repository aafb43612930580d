package interop

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writeEvidence writes the relay's datagrams as trace.pcapng (raw IP: the
// client at port 40000 + 16 × its flow + its path, the server at its own) and the
// key log as keys.log, which Wireshark takes to decrypt the trace
// (Preferences, TLS, (Pre)-Master-Secret log filename). A datagram the
// relay dropped is in the trace too, and one it corrupted is there as
// delivered, each with a packet comment that says so (Wireshark:
// pkt_comment; "frame.comment" in tshark).
func writeEvidence(dir string, recs []Record, keys *KeyLog, server *net.UDPAddr) error {
	if err := os.WriteFile(filepath.Join(dir, "keys.log"), keys.Bytes(), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "trace.pcapng"))
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := pcapgo.NewNgWriterInterface(f, pcapgo.NgInterface{Name: "relay", LinkType: layers.LinkTypeRaw},
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kqbench interop"}})
	if err != nil {
		return fmt.Errorf("interop: trace: %w", err)
	}
	v6 := server.IP.To4() == nil
	for _, r := range recs {
		var opts pcapgo.NgPacketOptions
		switch {
		case r.Dropped:
			opts.Comments = []string{"dropped by the relay: not delivered"}
		case r.Corrupted:
			opts.Comments = []string{"corrupted by the relay: delivered with one byte changed"}
		}
		// One port per client socket and path: Wireshark then keeps
		// connections one after another apart (multiconnect).
		client := &net.UDPAddr{IP: server.IP, Port: 40000 + (16*r.Flow+r.Path)%25000}
		src, dst := client, server
		if r.Dir == ToClient {
			src, dst = server, client
		}
		udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port), DstPort: layers.UDPPort(dst.Port)}
		var ip gopacket.SerializableLayer
		if v6 {
			l := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: src.IP, DstIP: dst.IP}
			udp.SetNetworkLayerForChecksum(l)
			ip = l
		} else {
			l := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.IP.To4(), DstIP: dst.IP.To4()}
			udp.SetNetworkLayerForChecksum(l)
			ip = l
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, udp, gopacket.Payload(r.Data)); err != nil {
			return fmt.Errorf("interop: trace: %w", err)
		}
		b := buf.Bytes()
		if err := w.WritePacketWithOptions(gopacket.CaptureInfo{Timestamp: r.Time, CaptureLength: len(b), Length: len(b)}, b, opts); err != nil {
			return fmt.Errorf("interop: trace: %w", err)
		}
	}
	return w.Flush()
}

//go:build linux

// Package capture records the wire view of one benchmark cell on one
// device: packets and bytes in each direction, a histogram of packet
// sizes, QUIC long- and short-header datagrams, TCP ACK-only segments, and,
// when asked, a pcapng file that Wireshark and tshark decrypt with the TLS
// key log embedded in it as a Decryption Secrets Block (and written beside
// it as <cell>.keys).
//
// The capture is a plain AF_PACKET socket (x/sys/unix, no cgo, no libpcap)
// with PACKET_VNET_HDR, so each packet comes with its direction and, for a
// GSO super-packet, its segment size. gopacket's afpacket ring hides both,
// so it is not used; gopacket decodes and pcapgo writes the file. A veth
// passes GSO super-packets whole; in the file, UDP super-packets are cut
// back into the datagrams the wire would carry (Wireshark cannot find the
// QUIC packets of a coalesced UDP GSO buffer), TCP super-packets stay
// whole (TCP reassembly does not care).
//
// # Integration in the matrix runner
//
// Per cell, on each end where it runs (client kqb0 in the client namespace,
// server kqb1 in the server namespace; one end is enough on a veth pair),
// before the connection is made (the key log is written in the handshake):
//
//	kl := capture.NewKeyLog()            // pass kl as tls.Config.KeyLogWriter
//	c, err := capture.Start(capture.Options{
//		Ifname: "kqb0", Do: topo.Client.Do, Dir: dir, Cell: cellName, KeyLog: kl,
//	})
//	c.Begin()                            // optional: count from now
//	... cell ...
//	c.End()                              // optional: up to now
//	st, err := c.Stop()                  // st.Flat() for the result
//
// Begin and End place packets by the kernel's timestamp (SO_TIMESTAMPNS),
// not by when the capture reads them, so a reader that lags the traffic
// still counts the window exactly; the file holds every packet from Start
// to Stop. Stop reads what was queued up to End, stopping at the first
// packet stamped after it.
//
// Start opens the socket inside the namespace through Do (nil: the caller's
// namespace); the socket stays there, so Stop may be called from anywhere.
// Capturing costs CPU on a 2-core machine: enable it only with --capture
// (or a --wire flag), not for the goodput cells by default.
package capture

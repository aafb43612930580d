//go:build linux

package kquic_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"testing"
	"time"

	"kquic.dev/internal/quicpeer"
	"kquic.dev/internal/quicwire"
	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// TestModuleBugInitialAck: once a kernel server has sent its first flight,
// it acknowledges the client's retransmitted Initial packets only with its
// own next retransmission (its PTO: about 1 s, then doubling). RFC 9000
// §13.2.1 wants every ack-eliciting Initial acknowledged at once; packet.c
// arms no ACK timer for an Initial on a server ("next handshake msg can
// bundle the ACK"), and after the first flight there is none. When that
// flight is lost, the client learns nothing for a second or more: under
// loss the handshake recovers slowly, and kqbench interop's handshakeloss
// and multiconnect saw quic-go's client give up.
//
// A raw client sends its ClientHello in Initial 0, takes the server's whole
// first flight without acknowledging it (as if it were lost), then sends
// the ClientHello again in Initial 1, and in Initial 2 400 ms later, before
// the server's first PTO. A server that acknowledges at once acknowledges
// Initial 1 before Initial 2 is sent.
func TestModuleBugInitialAck(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	closeAccepted(ln)
	pc, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ln.AddrPort()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	dcid, scid := []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 10, 11, 12, 13, 14, 15, 16}
	ckeys, skeys := quicwire.InitialKeys(quicwire.Version1, dcid)
	ctls, _ := tlsPair(t)
	ctls.MinVersion = tls.VersionTLS13
	ctls.CurvePreferences = []tls.CurveID{tls.X25519} // a ClientHello of one packet
	q := tls.QUICClient(&tls.QUICConfig{TLSConfig: ctls})
	ps := quicpeer.DefaultParams().Set(quicwire.TransportParameter{ID: quicwire.ParamInitialSourceConnectionID, Value: scid})
	q.SetTransportParameters(ps.Append(nil))
	if err := q.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	var hello []byte
	for e := q.NextEvent(); e.Kind != tls.QUICNoEvent; e = q.NextEvent() {
		if e.Kind == tls.QUICWriteData && e.Level == tls.QUICEncryptionLevelInitial {
			hello = append(hello, e.Data...)
		}
	}
	t0 := time.Now()
	sent := map[uint64]time.Time{}
	var log []string
	send := func(pn uint64) {
		h := &quicwire.Header{Type: quicwire.Initial, Version: quicwire.Version1, DstConnID: dcid, SrcConnID: scid, PNLen: 4}
		payload := quicwire.AppendFrames(nil, quicwire.Crypto{Data: hello})
		if probe := quicwire.AppendPacket(nil, h, pn, payload, ckeys); len(probe) < 1200 {
			payload = append(payload, make([]byte, 1200-len(probe))...)
		}
		if _, err := pc.Write(quicwire.AppendPacket(nil, h, pn, payload, ckeys)); err != nil {
			t.Fatal(err)
		}
		sent[pn] = time.Now()
		log = append(log, fmt.Sprintf("+%v client Initial %d", time.Since(t0).Round(time.Millisecond), pn))
	}
	// read takes the server's datagrams until deadline, or until it has
	// one whose Initial acknowledges packet want or later (want < 0: until
	// deadline), and returns when that one came.
	largest := int64(-1)
	buf := make([]byte, 65536)
	read := func(deadline time.Time, want int64) (acked time.Time, ok bool) {
		for {
			pc.SetReadDeadline(deadline)
			n, err := pc.Read(buf)
			if err != nil {
				return time.Time{}, false
			}
			at := time.Now()
			pkts, err := quicwire.SplitDatagram(buf[:n], len(scid))
			if err != nil {
				continue
			}
			var desc []string
			hit := false
			for _, p := range pkts {
				h, off, _, err := quicwire.ParseHeader(p, len(scid))
				if err != nil {
					continue
				}
				if h.Type != quicwire.Initial {
					desc = append(desc, h.Type.String())
					continue
				}
				payload, err := quicwire.OpenPacket(p, h, off, skeys, largest)
				if err != nil {
					continue
				}
				largest = max(largest, int64(h.PacketNumber))
				frames, err := quicwire.ParseFrames(payload)
				if err != nil {
					t.Fatalf("the server's Initial %d: %v", h.PacketNumber, err)
				}
				s := fmt.Sprintf("Initial %d", h.PacketNumber)
				for _, f := range frames {
					switch f := f.(type) {
					case *quicwire.Ack:
						s += fmt.Sprintf(" ACK(largest %d)", f.Largest)
						hit = hit || want >= 0 && int64(f.Largest) >= want
					case quicwire.Padding:
					default:
						s += " " + quicwire.FrameName(f.FrameType())
					}
				}
				desc = append(desc, s)
			}
			log = append(log, fmt.Sprintf("+%v server %v", at.Sub(t0).Round(time.Millisecond), desc))
			if hit {
				return at, true
			}
		}
	}
	send(0)
	if _, ok := read(time.Now().Add(20*time.Second), 0); !ok {
		t.Fatalf("no Initial from the server acknowledging our ClientHello within 20 s: %v", log)
	}
	// The rest of the first flight (its Handshake packets), until 200 ms
	// pass without a datagram: well under the server's first PTO.
	for quiet := time.Now(); ; quiet = time.Now() {
		if read(time.Now().Add(200*time.Millisecond), -1); time.Since(quiet) >= 200*time.Millisecond {
			break
		}
	}
	send(1)
	at, early := read(time.Now().Add(400*time.Millisecond), 1)
	if !early {
		send(2)
		if at, _ = read(time.Now().Add(5*time.Second), 1); at.IsZero() {
			t.Fatalf("the server acknowledged neither Initial 1 nor 2 within 5 s: %v", log)
		}
	}
	evidence := fmt.Sprintf("Initial 1 acknowledged %v after it was sent: %v", at.Sub(sent[1]).Round(time.Millisecond), log)
	t.Log(evidence)
	testenv.ModuleBug(t, bugInitialAck, !early, evidence)
}

package fuzz

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"kquic.dev/internal/quicwire"
)

// Generator makes inputs from a seed: input n is a function of the seed and
// n alone, so any input of a run can be made again without the others.
type Generator struct {
	Seed uint64
	// InitialShare is the share of inputs that are Initial datagrams
	// (0 to 1); the rest are 1-RTT payloads.
	InitialShare float64
}

// interesting are varint values at and around the edges of the encodings
// and of QUIC's limits.
var interesting = []uint64{0, 1, 2, 3, 4, 63, 64, 255, 256, 1199, 1200, 1<<14 - 1, 1 << 14, 65535, 65536,
	1<<30 - 1, 1 << 30, 1<<32 - 1, 1 << 32, 1 << 60, 1<<60 + 1, 1<<62 - 2, quicwire.MaxVarint}

// Input returns input n.
func (g *Generator) Input(n int) Input {
	r := rand.New(rand.NewPCG(g.Seed, uint64(n)))
	if r.Float64() < g.InitialShare {
		in := g.initial(r)
		in.Seq = n
		return in
	}
	payload, what := frames(r)
	in := Input{Seq: n, Kind: KindFrames, Payload: payload, What: what}
	if r.IntN(40) == 0 {
		in.Reserved = byte(1 + r.IntN(3))
		in.What += "; reserved bits"
	}
	return in
}

func value(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return uint64(r.IntN(16))
	case 1:
		return r.Uint64N(quicwire.MaxVarint + 1)
	}
	v := interesting[r.IntN(len(interesting))]
	if r.IntN(3) == 0 && v > 0 {
		v--
	}
	return v
}

func streamID(r *rand.Rand) uint64 {
	if r.IntN(4) == 0 {
		return value(r)
	}
	return uint64(r.IntN(24))
}

func bytesN(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func data(r *rand.Rand) []byte {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return bytesN(r, 1+r.IntN(1000))
	}
	return bytesN(r, 1+r.IntN(16))
}

// frame makes one frame with edge values.
func frame(r *rand.Rand) quicwire.Frame {
	switch r.IntN(22) {
	case 0:
		return quicwire.Padding{Len: 1 + r.IntN(8)}
	case 1:
		return quicwire.Ping{}
	case 2:
		a := &quicwire.Ack{Largest: value(r), Delay: value(r), FirstRange: value(r)}
		for i := r.IntN(4); i > 0; i-- { // overlapping, reversed, underflowing: any
			a.Ranges = append(a.Ranges, quicwire.AckRange{Gap: value(r), Len: value(r)})
		}
		if r.IntN(3) == 0 {
			a.ECN = &quicwire.ECNCounts{ECT0: value(r), ECT1: value(r), CE: value(r)}
		}
		return a
	case 3:
		return quicwire.ResetStream{StreamID: streamID(r), ErrorCode: value(r), FinalSize: value(r)}
	case 4:
		return quicwire.StopSending{StreamID: streamID(r), ErrorCode: value(r)}
	case 5:
		return quicwire.Crypto{Offset: value(r), Data: data(r)}
	case 6:
		return quicwire.NewToken{Token: data(r)}
	case 7, 8, 9:
		return quicwire.Stream{StreamID: streamID(r), Offset: value(r), Data: data(r), Fin: r.IntN(2) == 0,
			ExplicitOffset: r.IntN(2) == 0, NoLength: r.IntN(6) == 0}
	case 10:
		return quicwire.MaxData{Max: value(r)}
	case 11:
		return quicwire.MaxStreamData{StreamID: streamID(r), Max: value(r)}
	case 12:
		return quicwire.MaxStreams{Uni: r.IntN(2) == 0, Max: value(r)}
	case 13:
		return quicwire.DataBlocked{Limit: value(r)}
	case 14:
		return quicwire.StreamDataBlocked{StreamID: streamID(r), Limit: value(r)}
	case 15:
		return quicwire.StreamsBlocked{Uni: r.IntN(2) == 0, Limit: value(r)}
	case 16:
		seq := value(r)
		prior := seq
		if r.IntN(2) == 0 {
			prior = value(r) // above the sequence number, now and then
		}
		return quicwire.NewConnectionID{Seq: seq, RetirePriorTo: prior, ConnID: bytesN(r, r.IntN(24)), ResetToken: [16]byte(bytesN(r, 16))}
	case 17:
		return quicwire.RetireConnectionID{Seq: value(r)}
	case 18:
		return quicwire.PathChallenge{Data: [8]byte(bytesN(r, 8))}
	case 19:
		return quicwire.PathResponse{Data: [8]byte(bytesN(r, 8))}
	case 20:
		if r.IntN(4) == 0 {
			return quicwire.ConnectionClose{App: r.IntN(2) == 0, ErrorCode: value(r), Offending: value(r), Reason: data(r)}
		}
		return quicwire.HandshakeDone{}
	}
	if r.IntN(2) == 0 {
		return quicwire.Datagram{Data: data(r), NoLength: r.IntN(4) == 0}
	}
	return quicwire.Raw(quicwire.AppendVarint(nil, 0x1f+value(r)%(1<<20))) // an unknown type
}

// frames makes a 1-RTT payload: one to six frames, then, for some, byte
// mutations of the encoding.
func frames(r *rand.Rand) ([]byte, string) {
	var b []byte
	var names []string
	for i := 1 + r.IntN(6); i > 0; i-- {
		f := frame(r)
		b = f.Append(b)
		names = append(names, quicwire.FrameName(f.FrameType()))
	}
	what := "frames: " + strings.Join(names, ", ")
	if r.IntN(10) < 4 {
		var ms []string
		b, ms = mutate(r, b)
		what += "; mutated: " + strings.Join(ms, ", ")
	}
	return b, what
}

// mutate applies one to three byte-level mutations.
func mutate(r *rand.Rand, b []byte) ([]byte, []string) {
	var done []string
	for i := 1 + r.IntN(3); i > 0 && len(b) > 0; i-- {
		p := r.IntN(len(b))
		switch r.IntN(6) {
		case 0:
			b[p] ^= 1 << r.IntN(8)
			done = append(done, fmt.Sprintf("flip@%d", p))
		case 1:
			b[p] = []byte{0x00, 0xff, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0}[r.IntN(8)]
			done = append(done, fmt.Sprintf("set@%d", p))
		case 2:
			b = b[:p]
			done = append(done, fmt.Sprintf("truncate@%d", p))
		case 3:
			b = append(b[:p:p], append(bytesN(r, 1+r.IntN(8)), b[p:]...)...)
			done = append(done, fmt.Sprintf("insert@%d", p))
		case 4:
			end := p + r.IntN(len(b)-p) + 1
			b = append(b[:end:end], append(append([]byte(nil), b[p:end]...), b[end:]...)...)
			done = append(done, fmt.Sprintf("duplicate@%d-%d", p, end))
		case 5:
			q := r.IntN(len(b))
			b[p], b[q] = b[q], b[p]
			done = append(done, fmt.Sprintf("swap@%d,%d", p, q))
		}
	}
	return b, done
}

var (
	helloOnce sync.Once
	hello     []byte
)

// clientHello is a real ClientHello (crypto/tls's, for the conformance
// ALPN), so that mutated Initials get past the first checks.
func clientHello() []byte {
	helloOnce.Do(func() {
		q := tls.QUICClient(&tls.QUICConfig{TLSConfig: &tls.Config{ServerName: "localhost", NextProtos: []string{"kq-conformance"},
			MinVersion: tls.VersionTLS13, CurvePreferences: []tls.CurveID{tls.X25519}}})
		q.SetTransportParameters(quicwire.TransportParameters{quicwire.VarintParam(quicwire.ParamInitialMaxData, 1<<20)}.Append(nil))
		if err := q.Start(context.Background()); err == nil {
			for e := q.NextEvent(); e.Kind != tls.QUICNoEvent; e = q.NextEvent() {
				if e.Kind == tls.QUICWriteData {
					hello = append(hello, e.Data...)
				}
			}
		}
		q.Close()
	})
	return hello
}

// initial makes a datagram of one to three Initial packets, protected with
// the keys of its destination connection ID, their CRYPTO data a real or
// mangled ClientHello, then, for some, mutations of the clear header bytes.
func (g *Generator) initial(r *rand.Rand) Input {
	dcid := bytesN(r, 8+r.IntN(13))
	if r.IntN(10) == 0 {
		dcid = bytesN(r, r.IntN(8)) // under 8 bytes: a server must drop it
	}
	client, _ := quicwire.InitialKeys(quicwire.Version1, dcid)
	var what []string
	var dgram []byte
	for i := 1 + r.IntN(3)/2; i > 0; i-- {
		h := &quicwire.Header{Type: quicwire.Initial, Version: quicwire.Version1, DstConnID: dcid, SrcConnID: bytesN(r, r.IntN(21)), PNLen: 1 + r.IntN(4)}
		if r.IntN(5) == 0 {
			h.Token = data(r)
			what = append(what, "token")
		}
		ch := append([]byte(nil), clientHello()...)
		var payload []byte
		switch r.IntN(4) {
		case 0:
			payload = quicwire.Crypto{Data: ch}.Append(nil)
			what = append(what, "ClientHello")
		case 1:
			ch, ms := mutate(r, ch)
			payload = quicwire.Crypto{Data: ch}.Append(nil)
			what = append(what, "ClientHello mutated: "+strings.Join(ms, ","))
		case 2:
			payload = quicwire.Crypto{Offset: value(r), Data: ch[:r.IntN(len(ch)+1)]}.Append(nil)
			what = append(what, "ClientHello at an edge offset")
		default:
			var fs string
			payload, fs = frames(r)
			what = append(what, fs)
		}
		if r.IntN(4) != 0 { // most fill the datagram to 1200 bytes, as a server requires
			payload = append(payload, make([]byte, max(0, 1200-len(payload)-60))...)
		}
		start := len(dgram)
		dgram = quicwire.AppendPacket(dgram, h, uint64(r.IntN(4)), payload, client)
		if r.IntN(4) == 0 {
			// The version, the connection ID lengths, the token and length
			// fields are in the clear: mangle one of them.
			p := start + 1 + r.IntN(min(40, len(dgram)-start-1))
			dgram[p] = byte(r.Uint32())
			what = append(what, fmt.Sprintf("header byte %d", p-start))
		}
	}
	if r.IntN(8) == 0 {
		dgram = append(dgram, bytesN(r, 1+r.IntN(64))...)
		what = append(what, "trailing junk")
	}
	return Input{Kind: KindInitial, Payload: dgram, What: "initial: " + strings.Join(what, "; ")}
}

//go:build linux

package kquic_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kquic.dev/internal/quicwire"
	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// TestModuleBugPTOFirstInitial: a kernel client whose ClientHello takes two
// Initial packets (Go's default key shares in a first flight capped at 1200
// bytes, as quicnet dials) and whose first flight is lost probes, at every
// PTO, with the first packet's CRYPTO data only: the rest of the ClientHello
// is not sent again. A kernel server acknowledges none of the part it has
// (initial-ack), so nothing tells the client the rest is missing, and the
// handshake never completes. That is what a kernel server that starts
// listening just after its client dialed sees (the module's http3_test
// server in TestNGHTTP3Server before it waited for the listener).
//
// A relay between a kernel client and a kernel listener drops the client's
// first flight - every datagram until the whole ClientHello went by - and
// then forwards both ways, reading the client's Initial packets (their keys
// come from the first packet's Destination Connection ID). The bug shows as
// a handshake that fails after probes none of which carried CRYPTO data
// past the first packet's.
func TestModuleBugPTOFirstInitial(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	closeAccepted(ln)
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	back, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ln.AddrPort()))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	r := &initialRelay{front: front, back: back, done: make(chan struct{})}
	go r.fromServer()
	go r.fromClient()

	ctls, _ := tlsPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, derr := kquic.DialAddr(ctx, front.LocalAddr().(*net.UDPAddr).AddrPort(),
		&kquic.Config{TLS: ctls, InitialMaxUDPPayload: 1200})
	if derr == nil {
		c.Close()
	}
	front.Close()
	back.Close()
	<-r.done
	first, probes, log := r.result()
	evidence := fmt.Sprintf("first flight of %d Initial packets, the first carrying the ClientHello's bytes [0, %d) of %d; dial: %v; %s", first.packets, first.firstEnd, first.hello, derr, strings.Join(log, "; "))
	t.Log(evidence)
	if first.packets < 2 {
		t.Fatalf("the ClientHello took %d Initial packet(s): the test needs two (%s)", first.packets, evidence)
	}
	rest := false
	for _, p := range probes {
		rest = rest || p.end > first.firstEnd
	}
	if derr != nil && rest {
		t.Fatalf("the handshake failed though a probe carried the rest of the ClientHello: %s", evidence)
	}
	if derr != nil && len(probes) < 2 {
		t.Fatalf("the handshake failed after %d probe(s): too few to judge (%s)", len(probes), evidence)
	}
	testenv.ModuleBug(t, bugPTOFirstInitial, derr != nil, evidence)
}

// initialRelay drops a client's first flight and forwards the rest, noting
// the CRYPTO ranges of the client's Initial packets.
type initialRelay struct {
	front, back *net.UDPConn
	client      atomic.Pointer[net.UDPAddr]
	done        chan struct{}

	first  firstFlight
	probes []probe
	log    []string
	t0     time.Time
}

type firstFlight struct {
	packets  int    // Initial packets in it
	firstEnd uint64 // the end of the first packet's CRYPTO data
	hello    uint64 // the ClientHello's length, with its 4-byte header
	seen     uint64 // contiguous CRYPTO bytes from 0
	complete bool   // seen the whole ClientHello
}

type probe struct{ end uint64 } // a later Initial: its CRYPTO data's end

func (r *initialRelay) result() (firstFlight, []probe, []string) {
	return r.first, r.probes, r.log
}

func (r *initialRelay) fromServer() {
	buf := make([]byte, 65536)
	for {
		n, err := r.back.Read(buf)
		if err != nil {
			return
		}
		if c := r.client.Load(); c != nil {
			r.front.WriteToUDP(buf[:n], c)
		}
	}
}

func (r *initialRelay) fromClient() {
	defer close(r.done)
	buf := make([]byte, 65536)
	var keys *quicwire.Keys
	largest := int64(-1)
	for {
		n, from, err := r.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if r.t0.IsZero() {
			r.t0 = time.Now()
		}
		r.client.Store(from)
		dropping := !r.first.complete
		pkts, _ := quicwire.SplitDatagram(buf[:n], 0)
		for _, p := range pkts {
			h, off, _, err := quicwire.ParseHeader(p, 0)
			if err != nil || h.Type != quicwire.Initial {
				continue
			}
			if keys == nil {
				keys, _ = quicwire.InitialKeys(h.Version, h.DstConnID)
			}
			payload, err := quicwire.OpenPacket(p, h, off, keys, largest)
			if err != nil {
				continue
			}
			largest = max(largest, int64(h.PacketNumber))
			frames, _ := quicwire.ParseFrames(payload)
			var ranges []string
			var end uint64
			for _, f := range frames {
				if c, ok := f.(quicwire.Crypto); ok {
					ranges = append(ranges, fmt.Sprintf("[%d, %d)", c.Offset, c.Offset+uint64(len(c.Data))))
					end = max(end, c.Offset+uint64(len(c.Data)))
					if dropping {
						r.first.note(c)
					}
				}
			}
			what := "probe"
			if dropping {
				what = "first flight, dropped"
				if r.first.packets++; r.first.packets == 1 {
					r.first.firstEnd = end
				}
			} else {
				r.probes = append(r.probes, probe{end: end})
			}
			r.log = append(r.log, fmt.Sprintf("+%v client Initial %d CRYPTO %v (%s)", time.Since(r.t0).Round(time.Millisecond), h.PacketNumber, ranges, what))
		}
		if !dropping {
			r.back.Write(buf[:n])
		}
		r.first.complete = r.first.complete || r.first.hello > 0 && r.first.seen >= r.first.hello
	}
}

// note takes a CRYPTO frame of the first flight: the ClientHello's length
// from its header, and how far the data from 0 reaches.
func (f *firstFlight) note(c quicwire.Crypto) {
	if f.complete {
		return
	}
	if c.Offset == 0 && len(c.Data) >= 4 {
		f.hello = 4 + (uint64(c.Data[1])<<16 | uint64(c.Data[2])<<8 | uint64(c.Data[3]))
	}
	if c.Offset <= f.seen {
		f.seen = max(f.seen, c.Offset+uint64(len(c.Data)))
	}
}

// TestListeningEndpoints: a kernel QUIC listener is in /proc/net/quic/eps
// from Listen on, and gone after Close.
func TestListeningEndpoints(t *testing.T) {
	ln := hsListen(t, &kquic.Config{})
	if ok, err := kquic.Listening(ln.AddrPort()); err != nil || !ok {
		t.Fatalf("listening for %v: %v, %v, want true", ln.AddrPort(), ok, err)
	}
	other := netip.AddrPortFrom(ln.AddrPort().Addr(), ln.AddrPort().Port()+1)
	if ok, err := kquic.Listening(other); err != nil || ok {
		t.Errorf("listening for %v (another port): %v, %v, want false", other, ok, err)
	}
	ln.Close()
	if ok, err := kquic.Listening(ln.AddrPort()); err != nil || ok {
		t.Errorf("listening for %v after Close: %v, %v, want false", ln.AddrPort(), ok, err)
	}

	// WaitListening: a listener that comes later, and one that never does.
	type listened struct {
		ln  *kquic.Listener
		err error
	}
	ready := make(chan listened, 1)
	_, srvTLS := tlsPair(t)
	go func() {
		time.Sleep(100 * time.Millisecond) // the listener comes after the wait began
		ln, err := kquic.Listen("udp", ln.AddrPort().String(), &kquic.Config{TLS: srvTLS})
		ready <- listened{ln, err}
	}()
	werr := kquic.WaitListening(ctxT(t), ln.AddrPort())
	l := <-ready
	if l.err != nil {
		t.Fatalf("listening again on %v: %v", ln.AddrPort(), l.err)
	}
	l.ln.Close()
	if werr != nil {
		t.Errorf("waiting for a listener on %v: %v", ln.AddrPort(), werr)
	}
	gone := errors.New("the server exited")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(gone) })
	if err := kquic.WaitListening(ctx, other); !errors.Is(err, gone) || !strings.Contains(err.Error(), other.String()) {
		t.Errorf("waiting for %v, where nothing listens, until the context ends: %v", other, err)
	}
}

// TestWaitListeningFailsAtOnce: where the endpoints cannot be read (no
// module), WaitListening says so at once rather than wait.
func TestWaitListeningFailsAtOnce(t *testing.T) {
	// A port this test holds, so no kernel QUIC socket can listen on it.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	_, lerr := kquic.Listening(addr)
	if lerr == nil {
		// The endpoints are readable (the module is loaded): the wait ends
		// with the context, naming the address.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if err := kquic.WaitListening(ctx, addr); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), addr.String()) {
			t.Errorf("nothing listens on %v: %v", addr, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kquic.WaitListening(ctx, addr); err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "QUIC module") {
		t.Errorf("Listening: %v; WaitListening: %v, want Listening's error", lerr, err)
	}
}

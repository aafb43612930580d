//go:build linux

package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

const token = "correct horse battery staple"

// logBuffer is a log the server writes and the test reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// seen is where the last waitFor's match ended: each waitFor looks
	// only at what was written after it, so waiting twice for the same
	// line waits for it to be written twice.
	seen int
	// wrote is closed and replaced on every Write.
	wrote chan struct{}
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	return l.b.Write(p)
}

// waitFor waits for the log to mention s after what earlier waits matched.
func (l *logBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		l.mu.Lock()
		if i := strings.Index(l.b.String()[l.seen:], s); i >= 0 {
			l.seen += i + len(s)
			l.mu.Unlock()
			return
		}
		if l.wrote == nil {
			l.wrote = make(chan struct{})
		}
		wrote := l.wrote
		l.mu.Unlock()
		select {
		case <-wrote:
		case <-timeout:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Errorf("the server's log does not say %q after what the test already read:\n%s", s, l.b.String())
			return
		}
	}
}

// hosts is two network namespaces joined by a veth pair, standing for two
// hosts: A runs the client, B a kqbench server on kqb1.
type hosts struct {
	tp         *topo.Topology
	devA, devB *topo.Device
	srv        *Server
	addr       string
	log        *logBuffer
}

// newHosts starts a server in namespace B whose device is serverDev (""
// for the veth end).
func newHosts(t *testing.T, serverDev func(*topo.Topology) string) *hosts {
	t.Helper()
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	tp, err := topo.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tp.Close() })
	a, b := topo.Devices()
	if serverDev != nil {
		b = serverDev(tp)
	}
	h := &hosts{tp: tp, log: &logBuffer{}}
	if h.devA, err = topo.OpenDevice(a, tp.Client); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.devA.Close() })
	if h.devB, err = topo.OpenDevice(b, tp.Server); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.devB.Close() })
	if h.srv, err = NewServer(token, h.devB, h.log); err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := tp.Server.Do(func() (err error) {
		ln, err = net.Listen("tcp", netip.AddrPortFrom(topo.ServerAddr, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- h.srv.Serve(ln) }()
	t.Cleanup(func() {
		ln.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		h.srv.Close()
	})
	return h
}

// dialer dials from namespace A.
func (h *hosts) dialer(ctx context.Context, network, addr string) (c net.Conn, err error) {
	err = h.devA.Do(func() error {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

func (h *hosts) dial(t *testing.T, cfg Config) (*Client, error) {
	t.Helper()
	cfg.Dialer = h.dialer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Dial(ctx, h.addr, cfg)
}

// TestTwoHostMatrix runs a matrix through the control channel: tcp and
// quic-go, GSO on and off, both directions, MTU 9000 on both ends.
func TestTwoHostMatrix(t *testing.T) {
	h := newHosts(t, nil)
	c, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Peer() == nil || c.Peer().Transports["tcp"] != "available" || c.Device() != "kqb1" || c.Warning() != "" {
		t.Errorf("welcome: env %+v, device %q, warning %q", c.Peer(), c.Device(), c.Warning())
	}
	spec := matrix.Spec{
		Transports: []string{"tcp", "quic-go"}, Sizes: []int{1 << 10, 64 << 10}, MTUs: []int{9000},
		GSO: []bool{true, false}, Crypto: []bool{true, false}, Directions: []matrix.Direction{matrix.Up, matrix.Down},
		Streams: 1, Time: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Repeat: 2,
	}
	var mtuErrs []string
	r := &bench.Runner{Spec: spec, Client: h.devA, Server: c, Topology: "test", Peer: c.Peer(),
		Progress: func(_, _ int, cell matrix.Cell) {
			if cell.Transport == "tcp" && cell.Crypto || cell.Transport == "quic-go" && !cell.Crypto {
				return // n/a: reported before any device is set
			}
			for _, d := range []*topo.Device{h.devA, h.devB} {
				if m, err := d.MTU(); err != nil || m != 9000 {
					mtuErrs = append(mtuErrs, d.Name()+" during "+cell.Key())
				}
			}
		}}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(mtuErrs) > 0 {
		t.Errorf("MTU not 9000 on: %v", mtuErrs)
	}
	if doc.Env.Peer == nil || doc.Env.Topology != "test" {
		t.Errorf("environment: topology %q, peer %v", doc.Env.Topology, doc.Env.Peer)
	} else if n := doc.Env.Peer.NIC; n == nil || n.Device != "kqb1" || n.Driver != "veth" {
		t.Errorf("the peer's NIC record: %+v", n)
	}
	// The "peer" here is a namespace of this machine: said loudly.
	var tables strings.Builder
	render.WriteTables(&tables, doc)
	if !doc.Env.PeerIsThisMachine || !strings.Contains(tables.String(), "peer is this same machine") {
		t.Errorf("a peer on this machine (boot %s, peer's %s) is not reported: %v\n%s", doc.Env.BootID, doc.Env.Peer.BootID, doc.Env.PeerIsThisMachine, tables.String())
	}
	ok := 0
	for _, cell := range doc.Cells {
		switch {
		case cell.Transport == "tcp" && cell.Crypto, cell.Transport == "quic-go" && !cell.Crypto:
			if cell.Status != results.StatusNA {
				t.Errorf("%s: status %s, want n/a", cell.Key, cell.Status)
			}
			continue
		case cell.Status != results.StatusOK:
			t.Errorf("%s: %s %s", cell.Key, cell.Status, cell.Error)
			continue
		}
		ok++
		if !strings.Contains(cell.Offloads, "mtu=9000") || !strings.Contains(cell.PeerOffloads, "mtu=9000") {
			t.Errorf("%s: offloads %q, server's %q: want mtu=9000 on both", cell.Key, cell.Offloads, cell.PeerOffloads)
		}
		if !cell.GSO && !strings.Contains(cell.PeerOffloads, "gso_max_size=9000") {
			t.Errorf("%s: GSO off, but the server's device has %q", cell.Key, cell.PeerOffloads)
		}
		if len(cell.Samples) != 2 {
			t.Errorf("%s: %d samples", cell.Key, len(cell.Samples))
		}
		for _, s := range cell.Samples {
			if s.Bytes <= 0 || s.Bps <= 0 || s.ServerCPU == nil || s.ServerCPU.BusyCores <= 0 || s.CPU.BusyCores <= 0 {
				t.Errorf("%s: sample %+v (server CPU %+v)", cell.Key, s, s.ServerCPU)
			}
		}
	}
	if ok != 16 {
		t.Errorf("%d cells measured, want 16", ok)
	}
	// The end of the session puts the server's device back.
	c.Close()
	h.log.waitFor(t, "kqb1 restored")
	if m, _ := h.devB.MTU(); m != 1500 {
		t.Errorf("after the session the server's MTU is %d, want 1500 again", m)
	}
}

// TestRefusedMTU: a cell whose MTU the server's device refuses fails with
// the reason, and the matrix goes on.
func TestRefusedMTU(t *testing.T) {
	// A macvlan device refuses an MTU above its lower device's (1500).
	h := newHosts(t, func(tp *topo.Topology) string {
		nh, err := tp.Server.Netlink()
		if err != nil {
			t.Fatal(err)
		}
		defer nh.Close()
		_, b := topo.Devices()
		lower, err := nh.LinkByName(b)
		if err != nil {
			t.Fatal(err)
		}
		// The namespace is new (topo.New), so no device of that name is
		// left over in it: EEXIST, EPERM or any error but the kernel's
		// "Unknown device type" (EOPNOTSUPP: no macvlan driver built in
		// or loadable) fails the test.
		mv := &netlink.Macvlan{LinkAttrs: netlink.LinkAttrs{Name: "kqbmv", ParentIndex: lower.Attrs().Index}, Mode: netlink.MACVLAN_MODE_BRIDGE}
		if err := nh.LinkAdd(mv); errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("the kernel has no macvlan driver: %v", err)
		} else if err != nil {
			t.Fatalf("create a macvlan device on %s: %v", b, err)
		}
		return "kqbmv"
	})
	c, err := h.dial(t, Config{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !strings.Contains(c.Warning(), "not on its device kqbmv") {
		t.Errorf("warning %q: want the address not on kqbmv", c.Warning())
	}
	spec := matrix.Spec{
		Transports: []string{"tcp"}, Sizes: []int{64 << 10}, MTUs: []int{9000, 1500}, GSO: []bool{true},
		Crypto: []bool{false}, Directions: []matrix.Direction{matrix.Up}, Streams: 1, Time: 200 * time.Millisecond, Repeat: 1,
	}
	doc, err := (&bench.Runner{Spec: spec, Client: h.devA, Server: c}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 2 {
		t.Fatalf("%d cells", len(doc.Cells))
	}
	if f := doc.Cells[0]; f.Status != results.StatusFailed || !strings.Contains(f.Error, "server: topology: MTU 9000 on kqbmv") || !strings.Contains(f.Error, "refuses") {
		t.Errorf("MTU 9000 cell: %s %q; want it failed with the reason", f.Status, f.Error)
	}
	if o := doc.Cells[1]; o.Status != results.StatusOK {
		t.Errorf("MTU 1500 cell after the refused one: %s %s", o.Status, o.Error)
	}
}

func TestAuthentication(t *testing.T) {
	h := newHosts(t, nil)
	fp := h.srv.Fingerprint()

	t.Run("right token", func(t *testing.T) {
		// Pinned, in the colon-separated upper-case form too.
		var colons []string
		for i := 0; i < len(fp); i += 2 {
			colons = append(colons, strings.ToUpper(fp[i:i+2]))
		}
		for _, pin := range []string{"", fp, "SHA256:" + strings.Join(colons, ":")} {
			c, err := h.dial(t, Config{Token: token, Fingerprint: pin})
			if err != nil {
				t.Fatalf("pin %q: %v", pin, err)
			}
			if c.Fingerprint() != fp {
				t.Errorf("client saw fingerprint %s, server has %s", c.Fingerprint(), fp)
			}
			c.Close()
			h.log.waitFor(t, "kqb1 restored")
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		_, err := h.dial(t, Config{Token: "wrong"})
		if !errors.Is(err, ErrTokenRefused) || !strings.Contains(err.Error(), "the server refused the token") {
			t.Errorf("wrong token: %v", err)
		}
		h.log.waitFor(t, "wrong token")
	})
	t.Run("other version", func(t *testing.T) {
		_, err := h.dial(t, Config{Token: token, version: Version + 1})
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "same kqbench version") {
			t.Errorf("other version: %v", err)
		}
		h.log.waitFor(t, "protocol version 2")
	})
	t.Run("fingerprint mismatch", func(t *testing.T) {
		_, err := h.dial(t, Config{Token: token, Fingerprint: strings.Repeat("ab", 32)})
		if !errors.Is(err, ErrFingerprint) || !strings.Contains(err.Error(), fp) {
			t.Errorf("wrong fingerprint: %v", err)
		}
		h.log.waitFor(t, "not a kqbench client (TLS handshake")
	})
	t.Run("busy", func(t *testing.T) {
		c, err := h.dial(t, Config{Token: token})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := h.dial(t, Config{Token: token}); !errors.Is(err, ErrBusy) {
			t.Errorf("second client: %v, want busy", err)
		}
	})
	t.Run("plain TCP", func(t *testing.T) {
		conn, err := h.dialer(context.Background(), "tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: kqbench\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		if b, err := io.ReadAll(conn); len(b) > 0 && !bytes.HasPrefix(b, []byte{0x15}) { // at most a TLS alert
			t.Errorf("the server answered plain HTTP with %q (%v)", b, err)
		}
		h.log.waitFor(t, "not a kqbench client")
	})
	t.Run("HTTP over TLS", func(t *testing.T) {
		raw, err := h.dialer(context.Background(), "tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
		defer conn.Close()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: kqbench\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		b, _ := io.ReadAll(conn)
		if strings.Contains(string(b), "environment") {
			t.Errorf("the server welcomed an HTTP client: %q", b)
		}
		h.log.waitFor(t, "not the kqbench control protocol")
	})
	t.Run("unreachable", func(t *testing.T) {
		cfg := Config{Token: token, Dialer: h.dialer}
		addr := netip.AddrPortFrom(topo.ServerAddr, 1).String()
		_, err := Dial(context.Background(), addr, cfg)
		if err == nil || !strings.Contains(err.Error(), "cannot reach the kqbench server at "+addr) || !strings.Contains(err.Error(), "firewall") {
			t.Errorf("unreachable: %v", err)
		}
	})
}

// TestTwoHostExplain counts on both hosts: the server end's counters come
// back through the control channel.
func TestTwoHostExplain(t *testing.T) {
	h := newHosts(t, nil)
	c, err := h.dial(t, Config{Token: token, Fingerprint: h.srv.Fingerprint()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := matrix.Spec{
		Transports: []string{"tcp"}, Sizes: []int{16 << 10}, MTUs: []int{1500},
		GSO: []bool{true}, Crypto: []bool{false}, Directions: []matrix.Direction{matrix.Up},
		Streams: 1, Time: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Repeat: 1,
	}
	doc, err := (&bench.Runner{Spec: spec, Client: h.devA, Server: c, Topology: "test", Peer: c.Peer(), Explain: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Cells[0].Samples[0]
	for _, k := range []string{"client.tx_packets", "server.rx_packets"} {
		if s.Counters[k] <= 0 {
			t.Errorf("%s = %v; counters %v, missing %v", k, s.Counters[k], s.Counters, s.CountersMissing)
		}
	}
}

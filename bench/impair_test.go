//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/host"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/streams"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// impairSpec is one cell per transport: 64 KiB messages, MTU 1500, GSO on,
// encrypted, up, one sample.
func impairSpec(transports ...string) matrix.Spec {
	return matrix.Spec{
		Transports: transports,
		Sizes:      []int{64 << 10},
		MTUs:       []int{1500},
		GSO:        []bool{true},
		Crypto:     []bool{true},
		Directions: []matrix.Direction{matrix.Up},
		Streams:    1,
		Time:       time.Second,
		Warmup:     500 * time.Millisecond,
		Repeat:     1,
	}
}

func TestImpairmentSpecValidation(t *testing.T) {
	s := impairSpec("tcp")
	s.Netem, s.CC, s.Window, s.UDPRcvBuf = "delay=fast", []string{"cubic", "vegas", "cubic"}, 100, -1
	err := s.Validate()
	for _, want := range []string{`netem "delay=fast"`, `"vegas"`, `"cubic" given twice`, "window 100", "udp-rcvbuf -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; want it to name %q", err, want)
		}
	}
	s = impairSpec("tcp", "kquic")
	s.Netem, s.CC = "mobile", []string{"reno", "bbr"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 2 transports × 2 algorithms", len(cells))
	}
	if k := cells[0].Key(); !strings.HasSuffix(k, "/netem=mobile/cc=reno") {
		t.Errorf("key %q does not name the impairment and the algorithm", k)
	}
}

func runSpec(t *testing.T, r *bench.Runner) *results.Document {
	t.Helper()
	var log bytes.Buffer
	r.Log = &log
	doc, err := r.Run(context.Background())
	t.Logf("%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestWindowLimited: with a 64 KiB flow-control window over a 10 ms round
// trip, the QUIC transports' goodput sits at window/RTT (52 Mbit/s) and
// --explain says the window held them; with an 8 MiB window the bound is
// 6.7 Gbit/s, which they do not reach, and it does not.
//
// The window must be the tightest limit for the verdict to mean anything.
// Under emulation (qemu TCG) QUIC moves only 2-35 Mbit/s through a netem
// delay whatever the window (measured: 5-6 at 1 ms, 6-13 at 10 ms, 2-35 at
// 40-100 ms as the machine's load varies, against 262 for TCP's 64 KiB
// super-packets at 10 ms), so there the round trip is 100 ms, and the small
// window is cut to an eighth of what the 8 MiB run moved (at most 64 KiB):
// the emulated machine's pace varies with the load of its host (kquic
// moved 16 Mbit/s with 8 MiB, then 1.6 with 49 KiB, under a 4.0 bound).
//
// What an emulated machine cannot promise is the round trip: on a loaded
// host its vCPUs run late, each window's turn takes longer than the
// configured delay, and a flow held by its window moves less than half of
// window/RTT (CI: quic-go 1.6 Mbit/s under a 3.6 bound, 46%). There the
// small window's cells are held to the bound and to the verdict's own rule
// (TestWindowBrake in package render pins the rule); on a real machine
// they must be called window-limited.
func TestWindowLimited(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem)
	transports := []string{"quic-go"}
	if kmod.Probe(kmod.FeatureQUIC) == nil || testenv.Required("quic") {
		transports = append([]string{"kquic"}, transports...)
	}
	rtt := 10 * time.Millisecond
	emulated := host.CurrentEnvironment().Machine.Kind == results.MachineEmulated
	if emulated {
		rtt = 100 * time.Millisecond
	}
	run := func(window int, limited bool) *results.Document {
		spec := impairSpec(transports...)
		spec.Netem, spec.Window = "delay="+rtt.String(), window
		spec.Time = 2 * time.Second
		doc := runSpec(t, &bench.Runner{Spec: spec})
		var out bytes.Buffer
		if err := render.WriteExplain(&out, doc); err != nil {
			t.Fatal(err)
		}
		t.Logf("window %d, round trip %v:\n%s", window, rtt, out.String())
		// An emulated machine's round trip can exceed the delay (see
		// above): there a small window's verdict is not judged.
		judge := !emulated || !limited
		found := map[string]bool{}
		for _, b := range render.Brakes(doc) {
			if b.Kind != "window" {
				continue
			}
			found[b.Key] = true
			if judge && b.Limited != limited {
				t.Errorf("window %d: %s", window, b.Text)
			}
			if !judge {
				t.Logf("window %d on an emulated machine (not judged): %s", window, b.Text)
			}
		}
		for _, cell := range doc.Cells {
			if cell.Status != results.StatusOK {
				t.Fatalf("%s: %s %s", cell.Key, cell.Status, cell.Error)
			}
			if !found[cell.Key] {
				t.Errorf("window %d: no window brake for %s", window, cell.Key)
			}
			// The window is a hard bound: a goodput above it would mean the
			// delay or the window is not what the cell says.
			bound := float64(window) * 8 / rtt.Seconds()
			if cell.MedianBps > 1.2*bound {
				t.Errorf("%s: %.1f Mbit/s over a window/RTT bound of %.1f", cell.Key, cell.MedianBps/1e6, bound/1e6)
			}
		}
		if has := strings.Contains(out.String(), "WINDOW-LIMITED"); judge && has != limited {
			t.Errorf("window %d: explanation says WINDOW-LIMITED: %v, want %v", window, has, limited)
		}
		return doc
	}
	big := run(8<<20, false)
	ceiling := big.Cells[0].MedianBps
	for _, c := range big.Cells {
		ceiling = min(ceiling, c.MedianBps)
	}
	small := min(64<<10, int(ceiling/8*rtt.Seconds()/8)&^1023)
	if small < 4<<10 {
		t.Fatalf("QUIC moved only %.1f Mbit/s with an 8 MiB window: too little to test a smaller one against", ceiling/1e6)
	}
	if small < 64<<10 {
		t.Logf("the small window is %d bytes: an eighth of the %.1f Mbit/s the large one gave", small, ceiling/1e6)
	}
	run(small, true)
}

// TestRcvbufErrors: a quic-go receiver whose UDP buffer is 16 KiB overflows
// it, and the explanation names RcvbufErrors and the sysctl that lifts the
// ceiling.
func TestRcvbufErrors(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	spec := impairSpec("quic-go")
	spec.UDPRcvBuf = 16 << 10
	doc := runSpec(t, &bench.Runner{Spec: spec, Explain: true})
	var out bytes.Buffer
	if err := render.WriteExplain(&out, doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	c := doc.Cells[0]
	if c.Status != results.StatusOK {
		t.Fatalf("%s: %s %s", c.Key, c.Status, c.Error)
	}
	var rb []render.Brake
	for _, b := range render.Brakes(doc) {
		if b.Kind == "rcvbuf" {
			rb = append(rb, b)
		}
	}
	if len(rb) != 1 {
		t.Fatalf("%d receive-buffer brakes, want 1 (counters: %v; missing: %v)", len(rb), c.Samples[0].Counters["server.proc.Udp.RcvbufErrors"], c.Samples[0].CountersMissing)
	}
	for _, want := range []string{"RcvbufErrors", "net.core.rmem_max"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explanation does not name %s", want)
		}
	}
}

// TestLossCompletesHashChecked sends 1 MiB of random bytes over every
// transport on the lossy profiles; the server hashes what it read and the
// hash must be the sender's.
func TestLossCompletesHashChecked(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem)
	tp, err := topo.New()
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	data := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(data)
	want := sha256.Sum256(data)
	for _, profile := range []string{"lossy-5", "mobile"} {
		n, _ := topo.ParseNetem(profile)
		if err := tp.SetNetem(n); err != nil {
			t.Fatal(err)
		}
		for _, name := range transport.Names() {
			tr, _ := transport.Get(name)
			if err := tr.Available(); err != nil {
				t.Logf("%s: %v", name, err)
				continue
			}
			o := transport.Options{Crypto: name != "tcp", GSO: true}
			t.Run(profile+"/"+name, func(t *testing.T) {
				start := time.Now()
				got, err := transfer(tp, tr, o, data)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("the server's SHA-256 of 1 MiB is %x, the sender's %x", got, want)
				}
				t.Logf("1 MiB in %v, hash matches", time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// transfer sends data on a stream (its length first); the server reads
// that many bytes, and answers with their SHA-256.
func transfer(tp *topo.Topology, tr transport.Transport, o transport.Options, data []byte) (sum [32]byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ln transport.Listener
	if err := tp.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		return sum, err
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			served <- err
			return
		}
		defer s.Close()
		var n uint64
		if err := binary.Read(s, binary.BigEndian, &n); err != nil {
			served <- err
			return
		}
		h := sha256.New()
		if _, err := io.CopyN(h, s, int64(n)); err != nil {
			served <- fmt.Errorf("server: %w", err)
			return
		}
		_, err = s.Write(h.Sum(nil))
		served <- err
	}()
	var d transport.Dialer
	var s io.ReadWriteCloser
	if err := tp.Client.Do(func() (err error) {
		if d, err = tr.Dial(ctx, ln.Addr(), o); err != nil {
			return err
		}
		s, err = d.Open(ctx)
		return err
	}); err != nil {
		return sum, err
	}
	defer d.Close()
	defer s.Close()
	if err := binary.Write(s, binary.BigEndian, uint64(len(data))); err != nil {
		return sum, err
	}
	if _, err := s.Write(data); err != nil {
		return sum, err
	}
	if _, err := io.ReadFull(s, sum[:]); err != nil {
		return sum, fmt.Errorf("client: reading the hash: %w", err)
	}
	return sum, <-served
}

// TestStreamsMode sends 4 objects of 256 KiB at once over every transport
// on a lossy link: every object arrives whole (the server checks each
// one's SHA-256), each has its completion time, TCP and kTLS run both
// multiplexed over one connection and over a connection each, and
// --explain's counters cover the transfer.
func TestStreamsMode(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem)
	var ts []string
	for _, n := range transport.Names() {
		if tr, _ := transport.Get(n); tr.Available() == nil || testenv.Required(map[string]string{"kquic": "quic", "ktls": "tls"}[n]) {
			ts = append(ts, n)
		}
	}
	spec := impairSpec(ts...)
	spec.Mode, spec.Streams, spec.Sizes, spec.Netem = streams.Name, 4, []int{256 << 10}, "delay=10ms,loss=2%"
	spec.Crypto = []bool{true, false}
	btf := kmod.Probe(kmod.FeatureBTF) == nil
	doc := runSpec(t, &bench.Runner{Spec: spec, Explain: btf})
	var out bytes.Buffer
	if err := render.WriteTables(&out, doc); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	mux := map[string]bool{}
	for _, c := range doc.Cells {
		if c.Status == results.StatusNA {
			continue
		}
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s %s", c.Key, c.Status, c.Error)
			continue
		}
		if c.Mux {
			mux[c.Transport] = true
		}
		for _, s := range c.Samples {
			// --explain counts over the objects' transfer.
			if btf && s.Counters["client.tx_packets"] <= 0 {
				t.Errorf("%s: no packets counted (missing: %v)", c.Key, s.CountersMissing)
			}
			if len(streams.SecondsOf(&s)) != 4 || s.Bytes != 4*256<<10 {
				t.Errorf("%s: %d completion times, %d bytes", c.Key, len(streams.SecondsOf(&s)), s.Bytes)
			}
			for _, sec := range streams.SecondsOf(&s) {
				if sec <= 0.005 { // at least the one-way delay
					t.Errorf("%s: an object completed in %v s over a 10 ms round trip", c.Key, sec)
				}
			}
		}
	}
	for _, n := range ts {
		if (n == "tcp" || n == "ktls") && !mux[n] {
			t.Errorf("%s: no multiplexed cell", n)
		}
	}
	if !strings.Contains(out.String(), "1 connection, framed") {
		t.Errorf("the table does not show the multiplexed rows")
	}
}

type noClient struct{}

func (noClient) Prepare(int, bool) (string, string, error) { return "", "", nil }
func (noClient) Do(fn func() error) error                  { return fn() }

type noServer struct{}

func (noServer) Prepare(context.Context, int, bool) (string, error) { return "", nil }
func (noServer) Available(string) error                             { return nil }
func (noServer) Certificate() []byte                                { return nil }
func (noServer) Listen(context.Context, string, transport.Options, int) (side.ServerSample, error) {
	return nil, fmt.Errorf("not to be reached")
}

// TestTwoHostRefusesImpairments: two-host mode has no veth pair to impair
// and no in-process server to check objects, and says so before running.
func TestTwoHostRefusesImpairments(t *testing.T) {
	for _, c := range []struct {
		set  func(*matrix.Spec)
		want string
	}{
		{func(s *matrix.Spec) { s.Netem = "mobile" }, "--netem needs the single-host topology"},
		{func(s *matrix.Spec) { s.Mode = streams.Name }, "--mode streams runs on the single-host topology"},
	} {
		spec := impairSpec("tcp")
		c.set(&spec)
		_, err := (&bench.Runner{Spec: spec, Client: noClient{}, Server: noServer{}}).Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run = %v, want %q", err, c.want)
		}
	}
}

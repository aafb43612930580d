//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/native"
	"kquic.dev/bench/ngtcp2"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/send"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

// TestSendMethodCells runs bulk mode's send-method axis (--send) over the
// veth pair for every transport that runs here (in the guest kquic and
// ktls too): each method a transport has is measured, its counters say
// what the method implies (sendfile: no zero-copy sends; zerocopy and
// uring-zc: every send one, each completed, all of them copied on veth), and each one it
// lacks is n/a by name. The bytes each method moves are checked against
// the receiver's hash in package bench/send.
func TestSendMethodCells(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	spec := shortSpec("tcp", "ktls", "kquic", "quic-go")
	spec.Sizes, spec.GSO, spec.Crypto, spec.Repeat = []int{64 << 10}, []bool{true}, []bool{true, false}, 1
	spec.Time, spec.Warmup = 500*time.Millisecond, 100*time.Millisecond
	spec.Send = slices.Clone(send.Methods)
	if runtime.NumCPU() >= 2 {
		spec.Affinity = &matrix.Affinity{Client: 0, Server: 1}
	}
	r := &bench.Runner{Spec: spec, Explain: true}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	buffered := tcpBufferLimits(t)
	measured := map[string]bool{}
	for _, c := range doc.Cells {
		if c.Send == "" {
			continue
		}
		why := send.NA(c.Transport, c.Send)
		switch {
		case c.Status == results.StatusUnavailable:
			continue // the transport does not run here (kquic, ktls on the host)
		case c.Status == results.StatusNA:
			if why != "" && !strings.Contains(c.Note, why) && !(c.Transport == "tcp" && c.Crypto) && !(c.Transport == "ktls" && !c.Crypto) && !(c.Transport == "quic-go" && !c.Crypto) {
				t.Errorf("%s: n/a for %q, want %q", c.Key, c.Note, why)
			}
			if why == "" && !(c.Transport == "tcp" && c.Crypto) && !(c.Transport == "ktls" && !c.Crypto) {
				t.Errorf("%s: n/a (%s), but %s has %s", c.Key, c.Note, c.Transport, c.Send)
			}
			continue
		case c.Status != results.StatusOK:
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Note, c.Error)
			continue
		}
		if why != "" {
			t.Errorf("%s: measured, but %s", c.Key, why)
		}
		measured[c.ColumnName()] = true
		for _, s := range c.Samples {
			k := s.Counters
			if k[send.CounterCalls] <= 0 || k[send.CounterBytes] <= 0 {
				t.Errorf("%s: the senders counted %v", c.Key, k)
				continue
			}
			// What the client sent over the window is what the server
			// received, but for what the sockets' buffers took in or gave
			// out meanwhile: at most both buffers' limits.
			if d := math.Abs(k[send.CounterBytes] - float64(s.Bytes)); d > buffered {
				t.Errorf("%s: the sender counted %.0f bytes, the receiver %d: %.0f apart, more than the buffers hold (%.0f)", c.Key, k[send.CounterBytes], s.Bytes, d, buffered)
			}
			switch c.Send {
			case send.Sendfile:
				if _, ok := k[send.CounterZCSent]; ok {
					t.Errorf("%s: zero-copy sends counted for sendfile: %v", c.Key, k)
				}
			case send.ZeroCopy, send.UringZC:
				if k[send.CounterZCSent] != k[send.CounterCalls] {
					t.Errorf("%s: %v zero-copy sends of %v calls", c.Key, k[send.CounterZCSent], k[send.CounterCalls])
				}
				// Completions come after their sends: the window's count
				// has some of the sends before it and lacks some of its own.
				if d, z := k[send.CounterZCDone], k[send.CounterZCSent]; d < z/2 || d > 2*z {
					t.Errorf("%s: %v completions for %v sends", c.Key, d, z)
				}
				// veth delivers on this host: the kernel copies them all.
				if k[send.CounterZCCopied] != k[send.CounterZCDone] {
					t.Errorf("%s: %v of %v completions copied over veth, want all", c.Key, k[send.CounterZCCopied], k[send.CounterZCDone])
				}
			}
		}
	}
	for _, col := range []string{"tcp+sendfile", "tcp+zerocopy", "tcp+uring-zc"} {
		if !measured[col] {
			t.Errorf("no %s cell measured", col)
		}
	}
	var out bytes.Buffer
	render.WriteTables(&out, doc)
	render.WriteExplain(&out, doc)
	for _, want := range []string{"tcp | tcp+sendfile | tcp+zerocopy | tcp+uring-zc", "Send methods:", "100%", send.CopiedNote} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the tables and explanation lack %q:\n%s", want, out.String())
		}
	}
	t.Logf("measured %v\n%s", measured, out.String())
}

// TestNativeNgtcp2 measures the ngtcp2(C) column for real: Debian's
// gtlsserver and gtlsclient between the veth pair's namespaces, a
// download (down) and a POST (up), beside quic-go; unencrypted ngtcp2
// cells and kqbench's own ngtcp2 cells are n/a by name.
func TestNativeNgtcp2(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	if _, _, err := ngtcp2.Programs(); err != nil {
		testenv.Tool(t, "gtlsclient", "ngtcp2-client")
		testenv.Tool(t, "gtlsserver", "ngtcp2-server")
	}
	spec := shortSpec("quic-go", "ngtcp2")
	spec.Sizes, spec.GSO, spec.Repeat = []int{64 << 10}, []bool{true}, 2
	spec.Directions = []matrix.Direction{matrix.Up, matrix.Down}
	spec.Time, spec.Warmup = time.Second, 200*time.Millisecond
	spec.Drivers = []matrix.Driver{matrix.DriverGo, native.Name}
	if runtime.NumCPU() >= 2 {
		spec.Affinity = &matrix.Affinity{Client: 0, Server: 1}
	}
	r := &bench.Runner{Spec: spec, Explain: true}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range doc.Cells {
		if c.Transport != "ngtcp2" {
			continue
		}
		switch {
		case c.Driver != native.Name:
			if c.Status != results.StatusNA || !strings.Contains(c.Note, "native driver") {
				t.Errorf("%s: %s %q, want n/a: only the native driver measures ngtcp2", c.Key, c.Status, c.Note)
			}
			continue
		case !c.Crypto:
			if c.Status != results.StatusNA || !strings.Contains(c.Note, "always encrypts") {
				t.Errorf("%s: %s %q, want n/a: ngtcp2 always encrypts", c.Key, c.Status, c.Note)
			}
			continue
		case c.Status != results.StatusOK:
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Note, c.Error)
			continue
		}
		n++
		for _, s := range c.Samples {
			if s.Tool != native.ToolNgtcp2 || s.Bytes < 1<<20 || s.Bps < 1e6 || s.Bps > 400e9 {
				t.Errorf("%s: %s moved %d bytes at %.0f bit/s", c.Key, s.Tool, s.Bytes, s.Bps)
			}
			if s.CPU.BusyCores <= 0 {
				t.Errorf("%s: no CPU time in the window: %+v", c.Key, s.CPU)
			}
			if spec.Affinity != nil && (s.Ends == nil || s.Ends.Server == nil || s.Ends.Client.Busy <= 0 || s.Ends.Server.Busy <= 0) {
				t.Errorf("%s: no CPU per side: %+v", c.Key, s.Ends)
			}
			// QUIC packets of at most the MTU: at least 1000 per MB.
			if tx := s.Counters["server.tx_packets"] + s.Counters["client.tx_packets"]; tx < float64(s.Bytes)/1e6*500 {
				t.Errorf("%s: %.0f packets for %d bytes (counters %v)", c.Key, tx, s.Bytes, s.Counters)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d ngtcp2(C) cells measured, want 2 (up and down)", n)
	}
	var out bytes.Buffer
	render.WriteTables(&out, doc)
	if !strings.Contains(out.String(), "quic-go | ngtcp2(C)") {
		t.Errorf("the tables do not set ngtcp2(C) beside quic-go:\n%s", out.String())
	}
	t.Logf("\n%s", out.String())
}

// tcpBufferLimits is the most a TCP connection's two buffers hold: the
// largest send buffer and receive buffer (tcp_wmem, tcp_rmem), with the
// kernel's overhead share of them.
func tcpBufferLimits(t *testing.T) float64 {
	sum := 0.0
	for _, f := range []string{"/proc/sys/net/ipv4/tcp_wmem", "/proc/sys/net/ipv4/tcp_rmem"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fl := strings.Fields(string(b))
		if len(fl) != 3 {
			t.Fatalf("%s: %q", f, b)
		}
		n, err := strconv.ParseFloat(fl[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	return 2 * sum
}

//go:build linux

package vmpeer_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/bench/mode/bulk/conns"
	"kquic.dev/bench/remote"
	"kquic.dev/bench/results"
	"kquic.dev/bench/vmpeer"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// pairConfig is a --vm-peer run of the matrix flags args between two
// guests of the test kernel (a tap link as root, else the socket link),
// with both guests' output kept for the log.
func pairConfig(t *testing.T, args ...string) (vmpeer.Config, *syncBuffer) {
	t.Helper()
	a := testenv.VM(t)
	a.Timeout = 5 * time.Minute
	out, errA := &syncBuffer{}, &syncBuffer{}
	cfg := vmpeer.Config{A: a, B: a, Kqbench: testenv.Kqbench(t), Args: args,
		Out: filepath.Join(t.TempDir(), "m.json"), Stdout: out, Stderr: errA, PeerOut: out,
		PeerGrace: 5 * time.Second}
	if os.Geteuid() != 0 {
		cfg.Link.Backend = vm.LinkSocket
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("guest A's standard error:\n%s\nguest A's output and B's:\n%s", errA.String(), out.String())
		}
	})
	return cfg, errA
}

// syncBuffer is a bytes.Buffer the guests' outputs may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// quicModule is $KQUIC_MODULE, or "" (the kquic cells are then
// unavailable, which the tests check instead).
func quicModule(t *testing.T) string {
	m := os.Getenv(testenv.ModuleEnv)
	if m == "" && testenv.Required("quic") {
		t.Fatalf("required by $%s but absent: $%s names no quic.ko", testenv.RequireEnv, testenv.ModuleEnv)
	}
	return m
}

// TestMatrixBetweenGuests runs the two-host matrix between two guests:
// kquic (with $KQUIC_MODULE at both ends), ktls, tcp and quic-go cells are
// measured over the link with GSO on and off set on the virtio_net driver
// at both ends; the link carries frames of the MTU, as a wire; the results
// name two kernels (two boot IDs), the driver, the interrupts it took and
// "two guests on one host"; and no qemu is left.
func TestMatrixBetweenGuests(t *testing.T) {
	mod := quicModule(t)
	cfg, _ := pairConfig(t, "--transports=kquic,ktls,tcp,quic-go", "--sizes=16K", "--mtus=1500", "--gso=on,off",
		"--crypto=on,off", "--time=500ms", "--warmup=200ms", "--repeat=1", "--max-repeat=0", "--quiet")
	if mod != "" {
		cfg.A.ModuleFiles = []string{mod}
		cfg.B.ModuleFiles = []string{mod}
	}
	res, err := vmpeer.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertGone(t, res.Pair)
	d := res.Doc
	if d == nil || !d.Complete {
		t.Fatalf("results %+v: want a complete document", d)
	}
	gp := d.Env.GuestPair
	if gp == nil || !strings.HasPrefix(d.Env.Topology, results.TopologyGuestPair) {
		t.Fatalf("topology %q, pair %+v: want two guests on one host", d.Env.Topology, gp)
	}
	if d.Env.Peer == nil || d.Env.BootID == "" || d.Env.BootID == d.Env.Peer.BootID || d.Env.PeerIsThisMachine {
		t.Errorf("boot IDs: client %q, server %+v: want two different kernels", d.Env.BootID, d.Env.Peer)
	}
	if gp.Client.BootID != d.Env.BootID || gp.Server.BootID != d.Env.Peer.BootID {
		t.Errorf("the pair's boot IDs %s, %s are not those the ends reported: %s, %s", gp.Client.BootID, gp.Server.BootID, d.Env.BootID, d.Env.Peer.BootID)
	}
	if res.Fingerprint == "" {
		t.Error("guest B printed no fingerprint for A to pin")
	}
	for _, g := range []results.PairGuest{gp.Client, gp.Server} {
		t.Logf("guest %s: %s boot %s, %s %s, queues %d, offloads %v, %d interrupts %+v, rx %d tx %d packets, %s",
			g.Name, g.Kernel, g.BootID, g.Device, g.Driver, g.Queues, g.Offloads, g.IRQTotal(), g.IRQs, g.RxPackets, g.TxPackets, g.ModuleText())
		if g.Driver != "virtio_net" || g.IRQTotal() == 0 || g.RxPackets == 0 || g.TxPackets == 0 {
			t.Errorf("guest %s: driver %q, %d interrupts, %d/%d packets: want virtio_net that took interrupts and moved packets", g.Name, g.Driver, g.IRQTotal(), g.RxPackets, g.TxPackets)
		}
		if (mod != "") != (len(g.Modules) == 1) {
			t.Errorf("guest %s: modules %+v with $KQUIC_MODULE %q", g.Name, g.Modules, mod)
		}
	}
	// The link acts as a wire: with virtio-net's receive offload off, the
	// server's device took in no frame above the MTU (and its Ethernet
	// header), whatever TSO handed to the client's.
	if on, ok := gp.Server.Offloads[vm.FeatureGROHW]; !ok || on {
		t.Errorf("the server's offloads %v: want %s recorded, off", gp.Server.Offloads, vm.FeatureGROHW)
	}
	if avg := gp.Server.RxBytes / max(gp.Server.RxPackets, 1); avg > 1500+14 {
		t.Errorf("the server received %d frames of %d bytes on average: above the MTU, so TSO packets crossed whole", gp.Server.RxPackets, avg)
	}
	if d.Env.NIC == nil || d.Env.NIC.Driver != "virtio_net" || len(d.Env.NIC.IRQs) == 0 {
		t.Errorf("the client's NIC %+v: want virtio_net with its interrupts", d.Env.NIC)
	}
	tso := gp.Client.Offloads["tso"] // the socket link has none
	ran := map[string]bool{}
	for _, c := range d.Cells {
		t.Logf("%s: %s %s %.0f Mbit/s; offloads %s; server's %s", c.Key, c.Status, c.Note, c.MedianBps/1e6, c.Offloads, c.PeerOffloads)
		switch {
		case c.Status == results.StatusOK:
			ran[c.Transport] = true
			if c.MedianBps <= 0 || c.Samples[0].Bytes <= 0 || c.Samples[0].ServerCPU == nil {
				t.Errorf("%s: measured nothing, or without the server's CPU: %+v", c.Key, c.Samples)
			}
		case c.Transport == "kquic" && mod == "" && c.Status == results.StatusUnavailable:
			ran["kquic"] = true // without the module, it says why
		case c.Status == results.StatusFailed:
			t.Errorf("%s failed: %s", c.Key, c.Error)
		}
		if c.Status != results.StatusOK {
			continue
		}
		// GSO on and off are the driver's own switches, at both ends.
		for _, o := range []string{c.Offloads, c.PeerOffloads} {
			want := "tso=false gso=false"
			if c.GSO {
				want = "gso_max_size=65536"
				if tso {
					want = "tso=true gso=true"
				}
			}
			if !strings.Contains(o, want) {
				t.Errorf("%s: device state %q, want %q", c.Key, o, want)
			}
		}
	}
	for _, tr := range []string{"kquic", "ktls", "tcp", "quic-go"} {
		if !ran[tr] {
			t.Errorf("no cell of %s was measured", tr)
		}
	}
}

// TestServerTokenDiffers: a server guest started with another token
// refuses the client, which fails saying so; the run ends with no results
// and no qemu left.
func TestServerTokenDiffers(t *testing.T) {
	cfg, errA := pairConfig(t, "--transports=tcp", "--sizes=16K", "--mtus=1500", "--gso=on", "--crypto=off", "--time=500ms", "--repeat=1", "--quiet")
	cfg.Token, cfg.ServerToken = "the-client-token", "another-token"
	res, err := vmpeer.Run(context.Background(), cfg)
	var exit *vm.ExitError
	if !errors.As(err, &exit) || exit.Guest != "A" || !strings.Contains(errA.String(), remote.ErrTokenRefused.Error()) {
		t.Errorf("Run = %v, want guest A's matrix to fail with %q", err, remote.ErrTokenRefused)
	}
	if strings.Contains(err.Error(), "/bin/sh") {
		t.Errorf("the error shows the guest's script: %v", err)
	}
	if res == nil || res.Doc != nil {
		t.Errorf("result %+v: want the pair's, without results", res)
	}
	if res != nil {
		assertGone(t, res.Pair)
	}
}

// TestServerWithoutModule: guest B boots without quic.ko; the kquic cell
// is unavailable, saying the server lacks kernel QUIC, and the tcp cell
// runs: a mismatch is a reason, not a hang.
func TestServerWithoutModule(t *testing.T) {
	mod := quicModule(t)
	if mod == "" {
		t.Skip("needs $KQUIC_MODULE for guest A (without it neither end has kernel QUIC)")
	}
	cfg, _ := pairConfig(t, "--transports=kquic,tcp", "--sizes=16K", "--mtus=1500", "--gso=on", "--crypto=off", "--time=500ms", "--warmup=200ms", "--repeat=1", "--max-repeat=0", "--quiet")
	cfg.A.ModuleFiles = []string{mod}
	res, err := vmpeer.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertGone(t, res.Pair)
	gp := res.Doc.Env.GuestPair
	if len(gp.Client.Modules) != 1 || len(gp.Server.Modules) != 0 {
		t.Errorf("modules: client %+v, server %+v; want quic at A only", gp.Client.Modules, gp.Server.Modules)
	}
	for _, c := range res.Doc.Cells {
		t.Logf("%s: %s %s", c.Key, c.Status, c.Note)
		switch c.Transport {
		case "kquic":
			if c.Status != results.StatusUnavailable || !strings.Contains(c.Note, "on the server") {
				t.Errorf("kquic cell %s %q: want unavailable on the server, with the reason", c.Status, c.Note)
			}
		case "tcp":
			if c.Status != results.StatusOK {
				t.Errorf("tcp cell %s %q %s: want it measured", c.Status, c.Note, c.Error)
			}
		}
	}
}

// assertGone fails for a qemu of the pair still running.
func assertGone(t *testing.T, pr *vm.PairResult) {
	t.Helper()
	if pr == nil {
		t.Error("no pair result")
		return
	}
	for _, r := range []*vm.Result{pr.A, pr.B} {
		if r == nil {
			continue
		}
		for _, pid := range r.QemuPIDs {
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && bytes.Contains(b, []byte("qemu")) {
				t.Errorf("qemu %d of guest %s still runs", pid, r.Name)
			}
		}
	}
}

// TestConnsQueuesBetweenGuests runs a bulk cell of four connections over
// a tap link of four queue pairs between two guests of four CPUs each:
// the cell records where both ends' virtio-net devices put the flows:
// four receive queues, each queue's interrupt with the CPUs it may run on
// and its count over the window, and each queue's packets; the
// connections' bytes add up to the sample's.
func TestConnsQueuesBetweenGuests(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Root(t) // the tap link, the only one with several queues
	}
	cfg, _ := pairConfig(t, "--transports=tcp", "--conns=4", "--sizes=64K", "--mtus=1500", "--gso=on", "--crypto=off",
		"--time=1s", "--warmup=300ms", "--repeat=1", "--max-repeat=0", "--quiet", "--explain")
	cfg.A.CPUs, cfg.B.CPUs = 4, 4
	cfg.Link.Backend, cfg.Link.Queues = vm.LinkTap, 4
	res, err := vmpeer.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertGone(t, res.Pair)
	d := res.Doc
	if d == nil || !d.Complete || len(d.Cells) != 1 {
		t.Fatalf("results %+v: want a complete document of one cell", d)
	}
	c := d.Cells[0]
	if c.Status != results.StatusOK || c.Conns != 4 || len(c.Samples) != 1 {
		t.Fatalf("%s: %s %s %s, %d samples", c.Key, c.Status, c.Note, c.Error, len(c.Samples))
	}
	s := conns.SampleOf(&c.Samples[0])
	if s == nil {
		t.Fatalf("%s: no figures of the connections", c.Key)
	}
	var total int64
	for _, k := range s.Conns {
		total += k.Bytes
	}
	if len(s.Conns) != 4 || total != c.Samples[0].Bytes {
		t.Errorf("%d connections of %d bytes in all, the sample has %d", len(s.Conns), total, c.Samples[0].Bytes)
	}
	if len(s.NICMissing) > 0 {
		t.Errorf("the devices' queues not read: %v", s.NICMissing)
	}
	ends := map[string]bool{}
	for _, n := range s.NIC {
		ends[n.End] = true
		t.Logf("%s's %s: %d rx / %d tx queues, channels %s, RSS %+v (%s), flow hash %v", n.End, n.Device, n.RxQueues, n.TxQueues, n.Channels, n.RSS, n.RSSUnavailable, n.FlowHash)
		var fired, inputs int
		var irqs uint64
		for _, q := range n.IRQs {
			t.Logf("  irq %d %s on cpus %s: %d", q.IRQ, q.Name, q.CPUs, q.Count)
			if strings.Contains(q.Name, "-input.") {
				inputs++
				if q.CPUs == "" {
					t.Errorf("%s: interrupt %s without its CPUs", n.End, q.Name)
				}
			}
			if q.Count > 0 {
				fired++
			}
			irqs += q.Count
		}
		var rx int64
		for _, q := range n.Queues {
			t.Logf("  %s: %d packets, mask %s", q.Queue, q.Packets, q.CPUMask)
			if strings.HasPrefix(q.Queue, "rx-") {
				if q.Packets < 0 {
					t.Errorf("%s: %s has no packet count", n.End, q.Queue)
				}
				rx += q.Packets
			}
		}
		if n.RxQueues != 4 || n.TxQueues != 4 || inputs != 4 {
			t.Errorf("%s's %s: %d rx, %d tx queues, %d receive interrupts: want the four queue pairs of --link-queues 4", n.End, n.Device, n.RxQueues, n.TxQueues, inputs)
		}
		if fired == 0 || irqs == 0 || rx == 0 {
			t.Errorf("%s's %s: %d interrupts fired (%d in all), %d packets received in the window", n.End, n.Device, fired, irqs, rx)
		}
	}
	if !ends["client"] || !ends["server"] {
		t.Errorf("queues recorded of %v, want both ends", ends)
	}
}

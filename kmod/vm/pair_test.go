//go:build linux

package vm_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// The pair tests run this test binary in both guests as TestPairHelper,
// told its part by $KQVM_PAIR_HELPER.
const helperEnv = "KQVM_PAIR_HELPER"

const (
	helperPort     = "7777"
	doneSignalPort = "7778"
	phaseBytes     = 4 << 20
)

// phase is what guest A's helper reports of one transfer.
type phase struct {
	Offloads  string `json:"offloads"` // what the phase switched before sending
	Sent      int64  `json:"sent"`
	Hash      string `json:"hash"`      // of the bytes A sent
	PeerHash  string `json:"peer_hash"` // of the bytes B received, as B answered
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	TSO, GSO  bool
	Seconds   float64 `json:"seconds"`
}

// TestPairHelper is a guest's part in the pair tests; it does nothing on
// its own.
//
//	send N:   connect to the peer N times, each sending phaseBytes and
//	          reading back the peer's hash; before the second, switch TSO
//	          and GSO off with the ethtool tool; print one JSON line per phase
//	recv N:   accept N connections, answer each with the hash of what came
//	wait:     after the part, tell the peer (port 7778), sleep until stopped
//	panic:    after the part, crash the kernel once told
func TestPairHelper(t *testing.T) {
	part := os.Getenv(helperEnv)
	if part == "" {
		t.Skip("a guest's part in the pair tests")
	}
	fields := strings.Fields(part)
	n, _ := strconv.Atoi(fields[1])
	var err error
	switch fields[0] {
	case "send":
		err = helperSend(n)
	case "recv":
		err = helperRecv(n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	// A panic must not race the transfer's last bytes: A tells B on a
	// second port that it has its answer, then waits; B crashes then.
	done := net.JoinHostPort(os.Getenv("KQVM_ADDR"), doneSignalPort)
	for _, after := range fields[2:] {
		switch after {
		case "wait":
			c, err := dialPeer(net.JoinHostPort(os.Getenv("KQVM_PEER"), doneSignalPort))
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				os.Exit(1)
			}
			c.Close()
			time.Sleep(time.Hour)
		case "panic":
			l, err := net.Listen("tcp", done)
			if err == nil {
				_, err = l.Accept()
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				os.Exit(1)
			}
			os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0)
			time.Sleep(time.Hour)
		}
	}
	os.Exit(0)
}

func devCounter(dev, name string) uint64 {
	b, _ := os.ReadFile(filepath.Join("/sys/class/net", dev, "statistics", name))
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func helperSend(n int) error {
	dev, peer := os.Getenv("KQVM_DEV"), os.Getenv("KQVM_PEER")
	enc := json.NewEncoder(os.Stdout)
	for i := range n {
		var p phase
		if i == 1 {
			p.Offloads = "tso off gso off"
			if out, err := exec.Command(ethtoolTool(), "-K", dev, "tso", "off", "gso", "off").CombinedOutput(); err != nil {
				return fmt.Errorf("ethtool -K %s tso off gso off: %v: %s", dev, err, out)
			}
		}
		var err error
		if p.TSO, err = ethtool.Get(dev, ethtool.TSO); err != nil {
			return err
		}
		if p.GSO, err = ethtool.Get(dev, ethtool.GSO); err != nil {
			return err
		}
		pk, by := devCounter(dev, "tx_packets"), devCounter(dev, "tx_bytes")
		start := time.Now()
		c, err := dialPeer(net.JoinHostPort(peer, helperPort))
		if err != nil {
			return err
		}
		h := sha256.New()
		src := io.LimitReader(rand.NewChaCha8([32]byte{byte(i)}), phaseBytes)
		if p.Sent, err = io.Copy(io.MultiWriter(c, h), src); err != nil {
			return err
		}
		c.(*net.TCPConn).CloseWrite()
		reply, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			return err
		}
		p.Seconds = time.Since(start).Seconds()
		p.Hash, p.PeerHash = hex.EncodeToString(h.Sum(nil)), strings.TrimSpace(string(reply))
		p.TxPackets, p.TxBytes = devCounter(dev, "tx_packets")-pk, devCounter(dev, "tx_bytes")-by
		enc.Encode(p)
	}
	return nil
}

// dialPeer connects to the peer's helper, which starts listening at about
// the time this one starts: refused and unreachable are tried again.
func dialPeer(addr string) (net.Conn, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 30*time.Second)
		if err == nil || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func helperRecv(n int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(os.Getenv("KQVM_ADDR"), helperPort))
	if err != nil {
		return err
	}
	defer l.Close()
	for range n {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		h := sha256.New()
		got, err := io.Copy(h, c)
		if err != nil {
			return err
		}
		sum := hex.EncodeToString(h.Sum(nil))
		fmt.Printf("received %d %s\n", got, sum)
		io.WriteString(c, sum+"\n")
		c.Close()
	}
	return nil
}

// helperArgs runs this test binary's TestPairHelper.
func helperArgs(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^TestPairHelper$"}
}

func withHelper(cfg vm.Config, part string) vm.Config {
	cfg.Env = append(os.Environ(), helperEnv+"="+part)
	return cfg
}

// TestPairLink boots two guests joined by a link (a tap link with two
// queues where this test may create one, else the socket link) and checks
// in one boot what a two-host benchmark relies on: two kernels (their boot
// IDs differ), the virtio_net driver at both ends with the addresses,
// MTU, queues and offloads the harness set, data across the link intact
// both ways, an offload switched from inside taking effect on the wire
// (with TSO and GSO off the device sends no frame above the MTU), and
// an out-of-tree module given to one guest only, visible in what each
// reports.
func TestPairLink(t *testing.T) {
	cfg := testenv.VM(t)
	link := vm.Link{MTU: 9000, Offloads: map[string]bool{"gro": false}}
	tap := os.Geteuid() == 0
	if tap {
		link.Backend, link.Queues = vm.LinkTap, 2
	} else {
		link.Backend = vm.LinkSocket
		t.Log("not root: the socket link (no tap devices)")
	}
	// The module only A loads: the kernel QUIC module when given, else a
	// module file of the tree, loaded as an out-of-tree one would be.
	mod := os.Getenv("KQUIC_MODULE")
	if mod == "" {
		mod = filepath.Join(cfg.Modules, "kernel/drivers/net/dummy.ko.xz")
	}
	var outA, errA, outB, errB bytes.Buffer
	a, b := withHelper(cfg, "send 2"), withHelper(cfg, "recv 2")
	a.ModuleFiles = []string{mod}
	a.Stdout, a.Stderr, b.Stdout, b.Stderr = &outA, &errA, &outB, &errB
	a.Timeout = 5 * time.Minute
	res, err := vm.RunPair(context.Background(), vm.PairConfig{
		A: a, B: b, ArgsA: helperArgs(t), ArgsB: helperArgs(t), Link: link,
	})
	t.Logf("guest A stdout:\n%s\nstderr:\n%s", outA.String(), errA.String())
	t.Logf("guest B stdout:\n%s\nstderr:\n%s", outB.String(), errB.String())
	if err != nil {
		t.Fatalf("RunPair: %v", err)
	}
	assertGone(t, res.A, res.B)
	if res.Link.Backend != link.Backend || res.Link.MTU != 9000 {
		t.Errorf("link %+v, want backend %s, MTU 9000", res.Link, link.Backend)
	}
	ia, ib := res.A.Info, res.B.Info
	if ia == nil || ib == nil || ia.NIC == nil || ib.NIC == nil {
		t.Fatalf("guest info A %+v, B %+v: want both with a NIC", ia, ib)
	}
	if ia.BootID == "" || ia.BootID == ib.BootID {
		t.Errorf("boot IDs %q and %q: want two different ones", ia.BootID, ib.BootID)
	}
	for _, g := range []struct {
		name       string
		info       *vm.GuestInfo
		addr, peer string
	}{{"A", ia, "10.77.0.1/24", "10.77.0.2"}, {"B", ib, "10.77.0.2/24", "10.77.0.1"}} {
		nic := g.info.NIC
		t.Logf("guest %s: kernel %s, boot %s, %s %s (%s), MTU %d, queues %d of %d, offloads %v, modules %+v",
			g.name, g.info.Kernel, g.info.BootID, nic.Dev, nic.Driver.Driver, nic.Driver.BusInfo, nic.MTU, nic.Queues, nic.MaxQueues, nic.Offloads, g.info.Modules)
		if nic.Driver.Driver != "virtio_net" {
			t.Errorf("guest %s: driver %q, want virtio_net", g.name, nic.Driver.Driver)
		}
		if nic.Addr != g.addr || nic.Peer != g.peer || nic.MTU != 9000 {
			t.Errorf("guest %s: address %s, peer %s, MTU %d; want %s, %s, 9000", g.name, nic.Addr, nic.Peer, nic.MTU, g.addr, g.peer)
		}
		if on, ok := nic.Offloads["gro"]; !ok || on {
			t.Errorf("guest %s: offloads %v, want gro off as the link asked", g.name, nic.Offloads)
		}
		if tap && (nic.Queues != 2 || !nic.Offloads["tso"] || !nic.Offloads["tx-checksum"]) {
			t.Errorf("guest %s on a tap link: %d queues, offloads %v; want 2 queues, TSO and checksum offload", g.name, nic.Queues, nic.Offloads)
		}
		if !tap && (nic.Offloads["tso"] || nic.Offloads["tx-checksum"]) {
			t.Errorf("guest %s on a socket link has TSO or checksum offload on: qemu offers neither without virtio-net headers", g.name)
		}
	}
	// The module mismatch, as each guest reports it.
	if len(ia.Modules) != 1 || ia.Modules[0].Name == "" || ia.Modules[0].Srcversion+ia.Modules[0].BuildID == "" {
		t.Errorf("guest A's modules %+v: want %s, identified", ia.Modules, mod)
	}
	if len(ib.Modules) != 0 {
		t.Errorf("guest B's modules %+v: want none", ib.Modules)
	}
	// The data, hashed at both ends.
	var phases []phase
	sc := bufio.NewScanner(&outA)
	for sc.Scan() {
		var p phase
		if json.Unmarshal(sc.Bytes(), &p) == nil {
			phases = append(phases, p)
		}
	}
	if len(phases) != 2 {
		t.Fatalf("guest A reported %d transfers, want 2", len(phases))
	}
	for i, p := range phases {
		t.Logf("transfer %d (%s): %d bytes in %.2fs (%.0f Mbit/s), TSO %v GSO %v, %d frames of %d bytes on average",
			i, p.Offloads, p.Sent, p.Seconds, float64(p.Sent)*8/p.Seconds/1e6, p.TSO, p.GSO, p.TxPackets, p.TxBytes/max(p.TxPackets, 1))
		if p.Sent != phaseBytes || p.Hash != p.PeerHash || !strings.Contains(outB.String(), fmt.Sprintf("received %d %s", phaseBytes, p.Hash)) {
			t.Errorf("transfer %d: A sent %d bytes hashing %s, B answered %s; B printed %q", i, p.Sent, p.Hash, p.PeerHash, outB.String())
		}
	}
	// The sender's device counts what it was handed: TSO frames of many
	// MTUs, or with TSO and GSO off nothing above the MTU (and its
	// Ethernet header).
	off := phases[1]
	if off.TSO || off.GSO {
		t.Errorf("after ethtool -K tso off gso off, the ioctl reads TSO %v GSO %v", off.TSO, off.GSO)
	}
	if avg := off.TxBytes / max(off.TxPackets, 1); off.TxPackets == 0 || avg > 9000+14 {
		t.Errorf("with TSO and GSO off, %d frames of %d bytes on average: above the MTU", off.TxPackets, avg)
	}
	if on := phases[0]; tap && on.TSO && on.TxBytes/max(on.TxPackets, 1) <= 9000+14 {
		t.Errorf("with TSO on, %d frames of %d bytes on average: the device segmented nothing", on.TxPackets, on.TxBytes/max(on.TxPackets, 1))
	}
}

// TestPairPeerPanics: guest B's kernel panics while guest A waits for it;
// the pair ends at once with an error naming B's panic, A's command is
// stopped, and no qemu of either is left. It runs over the socket link, so
// that the data check covers both backends.
func TestPairPeerPanics(t *testing.T) {
	cfg := testenv.VM(t)
	var outA, outB, errB bytes.Buffer
	a, b := withHelper(cfg, "send 1 wait"), withHelper(cfg, "recv 1 panic")
	a.Stdout, b.Stdout, b.Stderr = &outA, &outB, &errB
	a.Timeout = 5 * time.Minute
	start := time.Now()
	res, err := vm.RunPair(context.Background(), vm.PairConfig{
		A: a, B: b, ArgsA: helperArgs(t), ArgsB: helperArgs(t), Link: vm.Link{Backend: vm.LinkSocket},
		PeerGrace: 5 * time.Second,
	})
	t.Logf("after %v: %v", time.Since(start), err)
	var ge *vm.GuestError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "guest B kernel panicked while the command ran") || !strings.Contains(err.Error(), "sysrq") {
		t.Errorf("RunPair = %v, want guest B's panic", err)
	}
	if strings.Contains(err.Error(), "guest A") {
		t.Errorf("the error blames guest A as well: %v", err)
	}
	if res == nil || res.A == nil || !res.A.Stopped {
		t.Fatalf("guest A's result %+v: want its command stopped", res)
	}
	assertGone(t, res.A, res.B)
	var p phase
	if json.Unmarshal(bytes.TrimSpace(outA.Bytes()), &p) != nil || p.Hash == "" || p.Hash != p.PeerHash {
		t.Errorf("the transfer before the panic: A printed %q, B %q", outA.String(), outB.String())
	}
	if res.B.Info == nil || res.B.Info.NIC == nil || res.B.Info.NIC.Offloads["tso"] {
		t.Errorf("guest B on the socket link: %+v, want a NIC without TSO", res.B.Info)
	}
}

// assertGone fails for a qemu of these results still running.
func assertGone(t *testing.T, rs ...*vm.Result) {
	t.Helper()
	n := 0
	for _, r := range rs {
		if r == nil {
			continue
		}
		for _, pid := range r.QemuPIDs {
			n++
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(b, []byte("qemu")) {
				t.Errorf("qemu %d of guest %s still runs", pid, r.Name)
			}
		}
	}
	if n == 0 {
		t.Error("the results name no qemu process")
	}
}

// ethtoolTool is the ethtool program of the host's root, which the guest shares.
func ethtoolTool() string {
	if p, err := exec.LookPath("ethtool"); err == nil {
		return p
	}
	return "/usr/sbin/ethtool"
}

// TestPairBadInputFailsBeforeBooting: a link that cannot be had is an error
// naming what to change, and no guest boots.
func TestPairBadInputFailsBeforeBooting(t *testing.T) {
	cfg := testenv.VM(t)
	for name, tc := range map[string]struct {
		link vm.Link
		b    func(*vm.Config)
		want string
	}{
		"MTU":              {vm.Link{MTU: 70000}, nil, "use 68 to 65535"},
		"queues on socket": {vm.Link{Backend: vm.LinkSocket, Queues: 4}, nil, "has one queue"},
		"backend":          {vm.Link{Backend: "vde"}, nil, "use socket, tap or auto"},
		"offload":          {vm.Link{Offloads: map[string]bool{"lro": false}}, nil, `offload "lro"`},
		"subnet":           {vm.Link{Subnet: netip.MustParsePrefix("fd00::/64")}, nil, "IPv4 prefix"},
		"B's kernel":       {vm.Link{Backend: vm.LinkSocket}, func(c *vm.Config) { c.Kernel = "/nonexistent" }, "not a readable file"},
	} {
		t.Run(name, func(t *testing.T) {
			b := cfg
			if tc.b != nil {
				tc.b(&b)
			}
			res, err := vm.RunPair(context.Background(), vm.PairConfig{A: cfg, B: b, ArgsA: []string{"/bin/true"}, ArgsB: []string{"/bin/true"}, Link: tc.link})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RunPair = %v, want an error containing %q", err, tc.want)
			}
			if res != nil {
				t.Errorf("RunPair returned a result %+v for a pair that cannot start", res)
			}
		})
	}
	assertNoQemuLeft(t)
}

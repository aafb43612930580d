//go:build linux

package capture

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/sys/unix"

	"kquic.dev/bench/counters"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/internal/ethtool"
	"kquic.dev/internal/testenv"
)

func newTopo(t *testing.T, gso bool) *topo.Topology {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces, AF_PACKET)")
	}
	tp, err := topo.New()
	if err != nil {
		t.Fatalf("topology: %v", err)
	}
	t.Cleanup(func() { tp.Close() })
	if _, err := tp.SetGSO(gso); err != nil {
		t.Fatalf("set gso: %v", err)
	}
	return tp
}

func udpSegmentCmsg(size uint16) []byte {
	b := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	b[unix.CmsgLen(0)], b[unix.CmsgLen(0)+1] = byte(size), byte(size>>8)
	return b
}

// sendUDP sends calls datagrams of size bytes (starting 0x40: a QUIC short
// header form) from the client namespace, each cut in segments of gso bytes
// when gso > 0.
func sendUDP(t *testing.T, tp *topo.Topology, calls, size, gso int) {
	t.Helper()
	var sfd int
	if err := tp.Server.Do(func() (err error) {
		if sfd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		return unix.Bind(sfd, &unix.SockaddrInet4{Port: 4500, Addr: topo.ServerAddr.As4()})
	}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sfd)
	buf := bytes.Repeat([]byte{0x40}, size)
	var cm []byte
	if gso > 0 {
		cm = udpSegmentCmsg(uint16(gso))
	}
	if err := tp.Client.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for i := 0; i < calls; i++ {
			if err := unix.Sendmsg(fd, buf, cm, &unix.SockaddrInet4{Port: 4500, Addr: topo.ServerAddr.As4()}, 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// readUDP counts the UDP datagrams to port 4500 in a pcapng file.
func readUDP(t *testing.T, file string) (n int, sizes map[int]int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	sizes = map[int]int{}
	var eth layers.Ethernet
	var ip layers.IPv4
	var udp layers.UDP
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return n, sizes
		}
		if err != nil {
			t.Fatalf("read %s: %v", file, err)
		}
		if eth.DecodeFromBytes(data, nil) != nil || eth.EthernetType != layers.EthernetTypeIPv4 ||
			ip.DecodeFromBytes(eth.Payload, nil) != nil || ip.Protocol != layers.IPProtocolUDP ||
			udp.DecodeFromBytes(ip.Payload, nil) != nil || udp.DstPort != 4500 {
			continue
		}
		n++
		sizes[len(udp.Payload)]++
	}
}

// TestCaptureMatchesCounters: the capture's transmit count, the pcapng and
// the eBPF transmit count agree, without and with UDP GSO super-packets.
func TestCaptureMatchesCounters(t *testing.T) {
	for _, tc := range []struct {
		name            string
		gso             bool
		calls, size, sg int
	}{{"nogso", false, 200, 1200, 0}, {"gso", true, 40, 12000, 1200}} {
		t.Run(tc.name, func(t *testing.T) {
			tp := newTopo(t, tc.gso)
			sendUDP(t, tp, 1, 100, 0) // ARP
			cdev, sdev := topo.Devices()
			if tc.gso {
				// The device takes the UDP super-packets whole, as a NIC
				// with UDP segmentation offload (the topology's veth
				// segments them): the capture sees them as the device does.
				if err := tp.Client.Do(func() error { return ethtool.SetFeature(cdev, "tx-udp-segmentation", true) }); err != nil {
					t.Fatal(err)
				}
			}
			if err := stampsOn(); err != nil { // its socket stays open
				t.Fatal(err)
			}
			fds := countFDs(t)
			dir := t.TempDir()
			cs, err := counters.Start(counters.Options{Ends: []counters.End{{Name: "client", Ifname: cdev, Do: tp.Client.Do}}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Start(Options{Ifname: cdev, Do: tp.Client.Do, Dir: dir, Cell: "udp " + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			s, err := Start(Options{Ifname: sdev, Do: tp.Server.Do})
			if err != nil {
				t.Fatal(err)
			}
			sendUDP(t, tp, tc.calls, tc.size, tc.sg)
			time.Sleep(50 * time.Millisecond)
			st, err := c.Stop()
			if err != nil {
				t.Fatal(err)
			}
			sst, err := s.Stop()
			if err != nil {
				t.Fatal(err)
			}
			cr, err := cs.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if got := countFDs(t); got != fds {
				t.Errorf("fds %d before, %d after", fds, got)
			}
			segs := 1
			if tc.sg > 0 {
				segs = tc.size / tc.sg
			}
			frame := 14 + 20 + 8*segs + tc.size
			t.Logf("capture tx %+v; server rx %+v; counters tx %d sizes %v; missing %v", st.Tx, sst.Rx, cr.Ends[0].TxPackets, cr.Ends[0].TxSizes, cr.MissingList())
			if got := st.Tx.Sizes[bucket(frame)]; got != uint64(tc.calls) {
				t.Errorf("captured tx frames of %d bytes: %d, want %d", frame, got, tc.calls)
			}
			if _, miss := cr.Missing["tx"]; !miss {
				if got := cr.Ends[0].TxSizes[bucketOfCounters(frame)]; got != uint64(tc.calls) {
					t.Errorf("net_dev_start_xmit count %d, want %d = capture", got, tc.calls)
				}
			}
			if got := st.Tx.QUICShort; got != uint64(tc.calls*segs) {
				t.Errorf("tx QUIC short-header datagrams %d, want %d", got, tc.calls*segs)
			}
			if got := sst.Rx.QUICShort; got != uint64(tc.calls*segs) {
				t.Errorf("server rx QUIC short-header datagrams %d, want %d", got, tc.calls*segs)
			}
			n, sizes := readUDP(t, st.File)
			if n != tc.calls*segs || sizes[tc.size/segs] != n {
				t.Errorf("pcapng: %d datagrams %v, want %d of %d bytes", n, sizes, tc.calls*segs, tc.size/segs)
			}
		})
	}
}

// TestWindow: with Begin and End only the packets between them count (by
// the kernel's timestamps), and the file still holds all of them.
func TestWindow(t *testing.T) {
	tp := newTopo(t, false)
	sendUDP(t, tp, 1, 100, 0) // ARP
	cdev, _ := topo.Devices()
	const before, in, after, size = 30, 70, 20, 1200
	c, err := Start(Options{Ifname: cdev, Do: tp.Client.Do, Dir: t.TempDir(), Cell: "window"})
	if err != nil {
		t.Fatal(err)
	}
	sendUDP(t, tp, before, size, 0)
	c.Begin(time.Now())
	sendUDP(t, tp, in, size, 0)
	c.End(time.Now())
	sendUDP(t, tp, after, size, 0)
	time.Sleep(50 * time.Millisecond)
	st, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tx %+v, outside %d", st.Tx, st.Outside)
	if got := st.Tx.QUICShort; got != in {
		t.Errorf("tx datagrams in the window %d, want %d (not the %d before or %d after)", got, in, before, after)
	}
	if st.Outside < before+after {
		t.Errorf("outside the window %d, want at least %d", st.Outside, before+after)
	}
	if n, _ := readUDP(t, st.File); n != before+in+after {
		t.Errorf("pcapng: %d datagrams, want all %d", n, before+in+after)
	}
}

func bucketOfCounters(n int) int {
	for i, b := range counters.SizeBounds {
		if uint32(n) <= b {
			return i
		}
	}
	return len(counters.SizeBounds)
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

const marker = "KQBENCH-PLAINTEXT-MARKER-7f3a"

// TestDecrypt: a capture of each available encrypted transport decrypts in
// tshark with the key log embedded in the pcapng (and with the .keys file).
func TestDecrypt(t *testing.T) {
	tshark := testenv.Tool(t, "tshark", "tshark")
	for _, name := range []string{"kquic", "ktls", "quic-go"} {
		t.Run(name, func(t *testing.T) {
			tr, err := transport.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Available(); err != nil {
				t.Skipf("%s not available: %v", name, err)
			}
			tp := newTopo(t, true)
			dir := t.TempDir()
			kl := NewKeyLog()
			cdev, _ := topo.Devices()
			c, err := Start(Options{Ifname: cdev, Do: tp.Client.Do, Dir: dir, Cell: name, KeyLog: kl})
			if err != nil {
				t.Fatal(err)
			}
			port := exchange(t, tp, tr, transport.Options{Crypto: true, GSO: true, KeyLog: kl})
			st, err := c.Stop()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: tx %d pkts (%d quic short, %d tcp data), rx %d pkts; %s", name, st.Tx.Packets, st.Tx.QUICShort, st.Tx.TCPData, st.Rx.Packets, st.File)
			if os.Getenv("KQB_CAPTURE_KEEP") != "" {
				keep := os.Getenv("KQB_CAPTURE_KEEP")
				b, _ := os.ReadFile(st.File)
				os.WriteFile(filepath.Join(keep, name+".pcapng"), b, 0o644)
				k, _ := os.ReadFile(st.KeyFile)
				os.WriteFile(filepath.Join(keep, name+".keys"), k, 0o644)
			}
			proto, field, dis := "quic", "quic.stream_data", "udp.port==%d,quic"
			if name == "ktls" {
				proto, field, dis = "tls", "data.data", "tcp.port==%d,tls"
			}
			dis = strings.Replace(dis, "%d", strconv.Itoa(port), 1)
			want := hex.EncodeToString([]byte(marker))
			for _, how := range [][]string{nil, {"-o", "tls.keylog_file:" + st.KeyFile}} {
				args := append([]string{"-r", st.File, "-d", dis, "-Y", proto + " && " + field, "-T", "fields", "-e", field}, how...)
				out, err := exec.Command(tshark, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("tshark %v: %v\n%s", args, err, out)
				}
				got := strings.ReplaceAll(string(out), ":", "")
				if !strings.Contains(got, want) {
					t.Errorf("tshark %s: no decrypted marker in %s (keys from %v)\n%.2000s", strings.Join(args, " "), field, how, out)
				} else {
					t.Logf("tshark %s: decrypted marker found (%d lines)", strings.Join(args, " "), strings.Count(got, "\n"))
				}
			}
		})
	}
}

// exchange opens one stream of tr from the client to the server namespace
// and sends the marker; it returns the server port.
func exchange(t *testing.T, tp *topo.Topology, tr transport.Transport, o transport.Options) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ln transport.Listener
	if err := tp.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		s, err := ln.Accept(ctx)
		if err != nil {
			got <- []byte("accept: " + err.Error())
			return
		}
		defer s.Close()
		b, _ := io.ReadAll(io.LimitReader(s, int64(10*len(marker))))
		got <- b
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
		t.Fatalf("dial: %v", err)
	}
	defer d.Close()
	if _, err := s.Write(bytes.Repeat([]byte(marker), 10)); err != nil {
		t.Fatalf("write: %v", err)
	}
	select {
	case b := <-got:
		if !bytes.Contains(b, []byte(marker)) {
			t.Fatalf("server got %q", b)
		}
	case <-ctx.Done():
		t.Fatal("server got nothing")
	}
	s.Close()
	time.Sleep(100 * time.Millisecond)
	return int(ln.Addr().Port())
}

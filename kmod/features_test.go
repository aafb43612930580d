//go:build linux

package kmod_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/netns"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func TestCheckCoversEveryFeature(t *testing.T) {
	res := kmod.Check()
	if len(res) != len(kmod.Features) {
		t.Fatalf("Check returned %d results for %d features", len(res), len(kmod.Features))
	}
	var report bytes.Buffer
	if err := kmod.WriteReport(&report, res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !strings.Contains(report.String(), r.Title) {
			t.Errorf("report lacks %q", r.Title)
		}
		if !r.OK() && r.Fix == "" {
			t.Errorf("%s is missing but says nothing about what to do", r.Feature)
		}
	}
	if _, err := kmod.ParseFeature("warp-drive"); err == nil {
		t.Error("ParseFeature accepted an unknown name")
	}
	t.Logf("\n%s", report.String())
}

// TestKernelTLSEncryptsAndDecrypts proves kernel TLS works: records the kernel
// encrypts decrypt with Go's AES-GCM, and records Go encrypts come out of the
// kernel as plaintext.
func TestKernelTLSEncryptsAndDecrypts(t *testing.T) {
	testenv.Require(t, kmod.FeatureTLS)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	kc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	raw, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	txKey, rxKey := bytes.Repeat([]byte{0x11}, 16), bytes.Repeat([]byte{0x22}, 16)
	txIV, rxIV := bytes.Repeat([]byte{0x33}, 12), bytes.Repeat([]byte{0x44}, 12)
	sc, _ := kc.(*net.TCPConn).SyscallConn()
	var serr error
	sc.Control(func(fd uintptr) {
		if serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_ULP, "tls"); serr != nil {
			return
		}
		if serr = setKey(int(fd), tlsTX, txKey, txIV); serr != nil {
			return
		}
		serr = setKey(int(fd), tlsRX, rxKey, rxIV)
	})
	if serr != nil {
		t.Fatalf("install kernel TLS keys: %v", serr)
	}

	// Kernel → Go.
	msg := []byte("encrypted by the kernel")
	if _, err := kc.Write(msg); err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 5)
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(raw, hdr); err != nil {
		t.Fatal(err)
	}
	if hdr[0] != 23 || hdr[1] != 3 || hdr[2] != 3 {
		t.Fatalf("record header % x: want application_data, TLS 1.2 legacy version", hdr)
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(raw, body); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, msg) {
		t.Fatal("the record carries the plaintext")
	}
	plain, err := gcm(t, txKey).Open(nil, nonce(txIV, 0), body, hdr)
	if err != nil {
		t.Fatalf("Go cannot decrypt the kernel's record: %v", err)
	}
	if want := append(append([]byte{}, msg...), 23); !bytes.Equal(plain, want) {
		t.Fatalf("decrypted %q, want %q", plain, want)
	}

	// Go → kernel, two records to exercise the sequence number.
	for seq, m := range []string{"encrypted by Go", "and again"} {
		inner := append([]byte(m), 23)
		h := []byte{23, 3, 3, 0, 0}
		binary.BigEndian.PutUint16(h[3:], uint16(len(inner)+16))
		rec := gcm(t, rxKey).Seal(append([]byte{}, h...), nonce(rxIV, uint64(seq)), inner, h)
		if _, err := raw.Write(rec); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(m))
		kc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(kc, got); err != nil || string(got) != m {
			t.Fatalf("kernel decrypted %q, %v; want %q", got, err, m)
		}
	}
}

// From <linux/tls.h>; the ktls package has the full ABI.
const (
	tlsTX              = 1
	tlsRX              = 2
	tls13Version       = 0x0304
	tlsCipherAESGCM128 = 51
)

// setKey installs a TLS 1.3 AES-128-GCM key (struct tls12_crypto_info_aes_gcm_128).
func setKey(fd, dir int, key, iv []byte) error {
	b := make([]byte, 40)
	binary.LittleEndian.PutUint16(b[0:], tls13Version)
	binary.LittleEndian.PutUint16(b[2:], tlsCipherAESGCM128)
	copy(b[4:12], iv[4:])  // iv
	copy(b[12:28], key)    // key
	copy(b[28:32], iv[:4]) // salt
	// rec_seq b[32:40] stays zero
	return unix.SetsockoptString(fd, unix.SOL_TLS, dir, string(b))
}

func gcm(t *testing.T, key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func nonce(iv []byte, seq uint64) []byte {
	n := append([]byte{}, iv...)
	for i := 0; i < 8; i++ {
		n[len(n)-1-i] ^= byte(seq >> (8 * i))
	}
	return n
}

// TestNetemOnVethInNamespaces adds netem delay on a veth pair between two
// network namespaces and observes it in a UDP round trip.
func TestNetemOnVethInNamespaces(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureNetem)
	a, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ha, _ := a.Netlink()
	defer ha.Close()
	hb, _ := b.Netlink()
	defer hb.Close()

	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "kqa"}, PeerName: "kqb", PeerNamespace: netlink.NsFd(b.Handle())}
	if err := ha.LinkAdd(veth); err != nil {
		t.Fatalf("create veth pair: %v", err)
	}
	setup := func(h *netlink.Handle, name, addr string) netlink.Link {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		ad, _ := netlink.ParseAddr(addr)
		if err := h.AddrAdd(l, ad); err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	la := setup(ha, "kqa", "192.0.2.1/24")
	setup(hb, "kqb", "192.0.2.2/24")

	const delay = 80 * time.Millisecond
	q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: la.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		netlink.NetemQdiscAttrs{Latency: uint32(delay / time.Microsecond)})
	if err := ha.QdiscAdd(q); err != nil {
		t.Fatalf("add netem qdisc: %v", err)
	}
	qs, err := ha.QdiscList(la)
	if err != nil || len(qs) == 0 || qs[0].Type() != "netem" {
		t.Fatalf("qdiscs on kqa = %v, %v; want netem", qs, err)
	}

	var srv, cli *net.UDPConn
	if err := b.Do(func() (err error) {
		srv, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("192.0.2.2"), Port: 0})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			srv.WriteToUDP(buf[:n], from)
		}
	}()
	if err := a.Do(func() (err error) {
		cli, err = net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	// The first packet also waits for ARP; measure the best of a few.
	best := time.Hour
	for i := 0; i < 4; i++ {
		start := time.Now()
		cli.Write([]byte("ping"))
		cli.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		if _, err := cli.Read(buf); err != nil {
			t.Fatalf("no echo across the veth pair: %v", err)
		}
		best = min(best, time.Since(start))
	}
	if best < delay {
		t.Errorf("round trip %v is shorter than the netem delay %v: the qdisc is not in effect", best, delay)
	}
	t.Logf("round trip with %v netem delay: %v", delay, best)
}

func TestLoadFileReportsKernelLog(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureModuleLoading)
	// A file that is not a module: the kernel refuses it.
	junk := filepath.Join(t.TempDir(), "junk.ko")
	os.WriteFile(junk, bytes.Repeat([]byte{0x7f, 'E', 'L', 'F'}, 64), 0o644)
	err := kmod.LoadFile(junk, "")
	var le *kmod.LoadError
	if !errors.As(err, &le) || !errors.Is(err, unix.ENOEXEC) && !errors.Is(err, unix.EINVAL) {
		t.Fatalf("LoadFile(junk) = %v, want a LoadError with ENOEXEC or EINVAL", err)
	}
	if !strings.Contains(err.Error(), junk) {
		t.Errorf("error does not name the file: %v", err)
	}
	t.Logf("kernel said: %v", err)
}

func TestLoadedQUICModule(t *testing.T) {
	testenv.Require(t, kmod.FeatureQUIC)
	m, err := kmod.Loaded("quic")
	if err != nil {
		t.Fatal(err)
	}
	if m.Builtin() || m.State != "live" {
		t.Errorf("quic module state %q, want live", m.State)
	}
}

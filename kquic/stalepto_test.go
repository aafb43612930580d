//go:build linux

package kquic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/testenv"
	"kquic.dev/kquic"
)

// The module's stale-PTO bug (issue 12).
//
// The module defers a loss-timer expiry that finds the socket owned by the
// user (timer.c quic_timer_timeout) and runs it later from release_cb
// (socket.c quic_release_cb) without checking that the timer is still due:
// release_sock() first processes the backlog, where an ACK may have emptied
// the flight and stopped the timer. quic_outq_transmit_pto() then asks
// quic_outq_get_pto_time(), which, with nothing in flight, picks the
// Handshake space whenever Handshake keys are installed - and a server keeps
// them for the life of the connection. So the server sends a Handshake PING
// padded to 1200 bytes. A peer that has discarded its Handshake keys, as RFC
// 9001 §4.9.2 requires (quic-go does), drops it unread and never
// acknowledges it, so it stays in flight for good: every later PTO is
// computed for the Handshake space (another unanswerable PING each time,
// each adding 1216 bytes to bytes-in-flight, the App space never probed),
// and with bytes in flight never back at 0 the module's Nagle
// (quic_outq_delay_check) holds every small write, such as the 32-byte
// SHA-256 answer of the interop test, forever. The peer has nothing to send
// and times out ("no recent network activity").
//
// A kernel QUIC client keeps its Handshake keys and acknowledges the PING,
// which is why kquic <-> kquic never shows it.

// staleptoVerdict reports the stale-PTO bug (bugStalePTO): an expected
// failure on a build it is known on, a failure on any other.
func staleptoVerdict(t *testing.T, evidence string) {
	t.Helper()
	testenv.ModuleBug(t, bugStalePTO, true, evidence)
}

// handshakeDropCounter is a quic-go tracer that counts the Handshake packets
// quic-go drops for want of keys: after the handshake only the stale-PTO bug
// makes the kernel send any. As a quic.Transport's tracer it also counts
// the datagrams quic-go could not parse that filled its whole read
// (quicGoMaxDatagram): those it read cut short (cut), the mark of the
// large-first-Initial bug (interopFailure).
type handshakeDropCounter struct{ n, cut atomic.Int32 }

// quicGoMaxDatagram is the most quic-go reads of a datagram
// (protocol.MaxPacketBufferSize); the rest of a longer one is lost.
const quicGoMaxDatagram = 1452

func (c *handshakeDropCounter) tracer(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
	return c
}
func (c *handshakeDropCounter) AddProducer() qlogwriter.Recorder { return c }
func (c *handshakeDropCounter) Close() error                     { return nil }
func (c *handshakeDropCounter) RecordEvent(ev qlogwriter.Event) {
	if d, ok := ev.(qlog.PacketDropped); ok && d.Header.PacketType == qlog.PacketTypeHandshake && d.Trigger == qlog.PacketDropKeysUnavailable {
		c.n.Add(1)
	}
	if d, ok := ev.(qlog.PacketDropped); ok && d.Trigger == qlog.PacketDropHeaderParseError && d.Raw.Length >= quicGoMaxDatagram {
		c.cut.Add(1)
	}
}

// staleptoRelay forwards UDP between a quic-go client and the kernel server,
// can hold what goes to the client, and counts what comes from each side.
type staleptoRelay struct {
	front, back *net.UDPConn
	mu          sync.Mutex
	client      *net.UDPAddr
	hold        bool
	held        [][]byte
	fromClient  atomic.Int32
	armed       atomic.Bool
	hsToClient  atomic.Int32 // Handshake packets from the server once armed
}

func newStaleptoRelay(t *testing.T, server netip.AddrPort) *staleptoRelay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(server))
	if err != nil {
		t.Fatal(err)
	}
	r := &staleptoRelay{front: front, back: back}
	t.Cleanup(func() { front.Close(); back.Close() })
	go func() {
		b := make([]byte, 65536)
		for {
			n, from, err := front.ReadFromUDP(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.client = from
			r.mu.Unlock()
			r.fromClient.Add(1)
			back.Write(b[:n])
		}
	}()
	go func() {
		b := make([]byte, 65536)
		for {
			n, err := back.Read(b)
			if err != nil {
				return
			}
			// Long header (0x80), version 1 type Handshake (0x20).
			if r.armed.Load() && n > 0 && b[0]&0xb0 == 0xa0 {
				r.hsToClient.Add(1)
			}
			r.mu.Lock()
			if r.hold {
				r.held = append(r.held, append([]byte(nil), b[:n]...))
			} else if r.client != nil {
				front.WriteToUDP(b[:n], r.client)
			}
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *staleptoRelay) addr() string { return r.front.LocalAddr().String() }

func (r *staleptoRelay) holdToClient() {
	r.mu.Lock()
	r.hold = true
	r.mu.Unlock()
}

func (r *staleptoRelay) releaseToClient() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hold = false
	for _, b := range r.held {
		r.front.WriteToUDP(b, r.client)
	}
	r.held = nil
}

// uffdBuffer is memory registered with userfaultfd: the first write to it,
// even the kernel's copy_to_user inside recvmsg, blocks until resolve. A
// recvmsg writing into it blocks while it owns the socket (lock_sock).
type uffdBuffer struct {
	fd       int
	mem, src []byte
}

func newUffdBuffer(t *testing.T, size int) *uffdBuffer {
	t.Helper()
	fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|unix.O_NONBLOCK, 0, 0)
	if e != 0 {
		t.Skipf("userfaultfd: %v (the reproducer needs it to hold the socket lock)", e)
	}
	u := &uffdBuffer{fd: int(fd)}
	t.Cleanup(func() { unix.Close(u.fd) })
	const (
		uffdioAPI      = 0xc018aa3f // _IOWR(0xAA, 0x3F, struct uffdio_api)
		uffdioRegister = 0xc020aa00 // _IOWR(0xAA, 0x00, struct uffdio_register)
	)
	api := [3]uint64{0xaa} // UFFD_API
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uffdioAPI, uintptr(unsafe.Pointer(&api))); e != 0 {
		t.Skipf("UFFDIO_API: %v", e)
	}
	var err error
	if u.mem, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		t.Fatal(err)
	}
	if u.src, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(u.mem); unix.Munmap(u.src) })
	reg := [4]uint64{uint64(uintptr(unsafe.Pointer(&u.mem[0]))), uint64(size), 1} // UFFDIO_REGISTER_MODE_MISSING
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, fd, uffdioRegister, uintptr(unsafe.Pointer(&reg))); e != 0 {
		t.Skipf("UFFDIO_REGISTER (kernel-mode faults need CAP_SYS_PTRACE or vm.unprivileged_userfaultfd): %v", e)
	}
	return u
}

// waitFault waits for the first page fault on the buffer.
func (u *uffdBuffer) waitFault(d time.Duration) error {
	fds := []unix.PollFd{{Fd: int32(u.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(d/time.Millisecond))
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no page fault")
	}
	var msg [32]byte // struct uffd_msg
	if _, err := unix.Read(u.fd, msg[:]); err != nil {
		return err
	}
	if msg[0] != 0x12 { // UFFD_EVENT_PAGEFAULT
		return fmt.Errorf("userfaultfd event %#x", msg[0])
	}
	return nil
}

// resolve maps the whole buffer: the blocked copy completes.
func (u *uffdBuffer) resolve() error {
	const uffdioCopy = 0xc028aa03 // _IOWR(0xAA, 0x03, struct uffdio_copy)
	c := [5]uint64{uint64(uintptr(unsafe.Pointer(&u.mem[0]))), uint64(uintptr(unsafe.Pointer(&u.src[0]))), uint64(len(u.mem))}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(u.fd), uffdioCopy, uintptr(unsafe.Pointer(&c))); e != 0 {
		return fmt.Errorf("UFFDIO_COPY: %v", e)
	}
	return nil
}

// staleptoSession is a quic-go client connected to a kquic server through
// a staleptoRelay, with one stream open both ways.
type staleptoSession struct {
	qc     *quic.Conn
	srv    *kquic.Conn
	cs     *quic.Stream
	ss     *kquic.Stream
	relay  *staleptoRelay
	drops  *handshakeDropCounter
	cancel context.CancelFunc
}

// staleptoTrigger sets up a session and puts the server in the stale-PTO
// state (see TestModuleStalePTO); what the module then does is the caller's
// to check.
func staleptoTrigger(t *testing.T, scfg *kquic.Config) *staleptoSession {
	t.Helper()
	ctls, stls := tlsPair(t)
	scfg.TLS = stls
	ln := hsListen(t, scfg)
	ub := newUffdBuffer(t, 64<<10)
	x := &staleptoSession{relay: newStaleptoRelay(t, ln.AddrPort()), drops: &handshakeDropCounter{}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	var err error
	x.qc, err = quic.DialAddr(ctx, x.relay.addr(), ctls, &quic.Config{Tracer: x.drops.tracer, MaxIdleTimeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("quic-go dial through the relay: %v", err)
	}
	t.Cleanup(func() { x.qc.CloseWithError(0, "") })
	if x.srv, err = ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.srv.Close() })

	// A stream both ways, then quiet: the handshake is confirmed (quic-go
	// has dropped its Handshake keys) and all is acknowledged.
	if x.cs, err = x.qc.OpenStreamSync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.cs.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if x.ss, err = x.srv.AcceptStream(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(x.ss, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ss.Write([]byte("h")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(x.cs, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	x.relay.armed.Store(true)

	// The server's Read becomes the receiver, into the faulting buffer.
	type result struct {
		n   int
		err error
	}
	read := make(chan result, 1)
	go func() {
		n, err := x.ss.Read(ub.mem)
		read <- result{n, err}
	}()
	time.Sleep(200 * time.Millisecond)

	// P: in flight, held by the relay so that the client's data below does
	// not acknowledge it.
	x.relay.holdToClient()
	if _, err := x.ss.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := x.cs.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := ub.waitFault(10 * time.Second); err != nil {
		x.relay.releaseToClient()
		t.Fatalf("the server's recvmsg did not block on the buffer: %v", err)
	}
	// The socket is owned now. The client gets P and acknowledges it.
	n0 := x.relay.fromClient.Load()
	x.relay.releaseToClient()
	for i := 0; x.relay.fromClient.Load() == n0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if x.relay.fromClient.Load() == n0 {
		t.Fatal("the client sent nothing after P reached it")
	}
	// Well past the PTO: the loss timer expires while the socket is owned.
	time.Sleep(3 * time.Second)
	if err := ub.resolve(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-read:
		if r.err != nil || r.n != 1 || ub.mem[0] != 'a' {
			t.Fatalf("server Read: %d %q, %v", r.n, ub.mem[:r.n], r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server's Read did not complete")
	}
	if _, err := io.ReadFull(x.cs, make([]byte, 1)); err != nil {
		t.Fatalf("client reading P: %v", err)
	}
	time.Sleep(time.Second)
	return x
}

// quicConns is /proc/net/quic/conns, for the evidence.
func quicConns() string {
	c, err := os.ReadFile("/proc/net/quic/conns")
	if err != nil {
		return ""
	}
	return "; /proc/net/quic/conns:\n" + strings.TrimSpace(string(c))
}

// TestModuleStalePTO reproduces the stale-PTO bug deterministically: a
// quic-go client and a kquic server through a relay. The server has one
// packet in flight (P) when its Read starts copying data into a buffer that
// faults (userfaultfd), so the copy blocks inside recvmsg with the socket
// owned by the user. While it is blocked, the client's ACK of P arrives
// (queued in the socket backlog) and the loss timer expires (deferred). When
// the copy completes, release_sock processes the ACK - nothing in flight,
// timer stopped - and then runs the deferred PTO, which sends a Handshake
// packet. The test then shows the consequence: the server's next small write
// never reaches the client.
func TestModuleStalePTO(t *testing.T) {
	x := staleptoTrigger(t, &kquic.Config{})
	cs, ss, relay, drops := x.cs, x.ss, x.relay, x.drops

	// Did the server send Handshake packets after the handshake?
	hs := relay.hsToClient.Load()

	// The consequence: a small answer from the server.
	start := time.Now()
	if _, err := ss.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	cs.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, 6)
	_, rerr := io.ReadFull(cs, got)
	evidence := fmt.Sprintf("the server sent %d Handshake packet(s) after the handshake (quic-go dropped %d for want of keys); its 6-byte write then ", hs, drops.n.Load())
	if rerr != nil {
		evidence += fmt.Sprintf("did not reach the client in 5 s (%v)", rerr)
	} else {
		evidence += fmt.Sprintf("arrived in %v", time.Since(start).Round(time.Millisecond))
	}
	evidence += quicConns()
	t.Log(evidence)
	testenv.ModuleBug(t, bugStalePTO, hs > 0 || rerr != nil, evidence)
}

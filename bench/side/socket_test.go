//go:build linux

package side

import (
	"bytes"
	"io"
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// tcpPair is a connected pair of loopback TCP connections; bufs, if
// positive, is the client's send buffer and the server's receive buffer.
func tcpPair(t *testing.T, bufs int) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if bufs > 0 {
		rc, _ := ln.SyscallConn()
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, bufs) })
	}
	type res struct {
		c   *net.TCPConn
		err error
	}
	acc := make(chan res, 1)
	go func() {
		c, err := ln.AcceptTCP()
		acc <- res{c, err}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client = nc.(*net.TCPConn)
	if bufs > 0 {
		client.SetWriteBuffer(bufs)
	}
	r := <-acc
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

// blocking reports whether the stream's descriptor is in blocking mode.
func blocking(t *testing.T, s *socketStream) bool {
	t.Helper()
	var flags int
	var ferr error
	if err := s.rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatalf("fcntl: %v %v", err, ferr)
	}
	return flags&unix.O_NONBLOCK == 0
}

// Without $KQBENCH_SOCKET_PUMPS a TCP stream's pump goes through Go's
// poller, its descriptor left non-blocking.
func TestSocketPumpsOptIn(t *testing.T) {
	t.Setenv(SocketPumpsEnv, "")
	client, server := tcpPair(t, 0)
	p := NewPumps(4096, 0, -1)
	p.Start(client, true)
	if _, err := io.ReadFull(server, make([]byte, 8192)); err != nil {
		t.Fatal(err)
	}
	if s, ok := opened(t, p).(*socketStream); ok {
		t.Errorf("the pump's stream is a socketStream (blocking %v) without $%s", blocking(t, s), SocketPumpsEnv)
	}
	p.Close()
	if err := p.Wait("client"); err != nil {
		t.Fatal(err)
	}
}

// opened is the one stream p holds.
func opened(t *testing.T, p *Pumps) io.ReadWriteCloser {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.open) != 1 {
		t.Fatalf("%d streams open, want 1", len(p.open))
	}
	return p.open[0]
}

// A TCP stream's sending pump writes with blocking write(2) on its
// descriptor, and the bytes that arrive are its messages, whole and in
// order.
func TestSocketPumpSends(t *testing.T) {
	t.Setenv(SocketPumpsEnv, "1")
	client, server := tcpPair(t, 0)
	const size = 64<<10 + 3
	p := NewPumps(size, 0, -1)
	p.Start(client, true)
	want := bytes.Repeat(p.buf, 20)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	ss, ok := opened(t, p).(*socketStream)
	if !ok {
		t.Fatalf("the pump's stream is %T, want a *socketStream", opened(t, p))
	}
	if !blocking(t, ss) {
		t.Error("the sending pump's descriptor is non-blocking")
	}
	if !bytes.Equal(got, want) {
		t.Error("the bytes that arrived are not the pump's messages in order")
	}
	p.Close()
	if err := p.Wait("client"); err != nil {
		t.Fatal(err)
	}
}

// A TCP stream's receiving pump counts exactly the bytes the peer sent,
// under its tag too, and ends at the stream's end.
func TestSocketPumpCounts(t *testing.T) {
	t.Setenv(SocketPumpsEnv, "1")
	client, server := tcpPair(t, 0)
	p := NewPumps(4096, 0, 0) // pinned to CPU 0, as the matrix's ends are
	tag := p.tag(7)
	p.add(server)
	p.wg.Add(1)
	go p.pumpTagged(server, false, tag)
	const n = 3<<20 + 5
	if _, err := client.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	client.CloseWrite()
	if err := p.Wait("server"); err != nil {
		t.Fatal(err)
	}
	if got := p.Received(); got != n {
		t.Errorf("received %d bytes, want %d", got, n)
	}
	if got := p.Tagged()[7]; got != n {
		t.Errorf("received %d bytes under the stream's tag, want %d", got, n)
	}
	if _, ok := opened(t, p).(*socketStream); !ok {
		t.Errorf("the pump's stream is %T, want a *socketStream", opened(t, p))
	}
	p.Close()
}

// Close wakes a pump blocked in write(2) (the peer reads nothing: a
// message larger than both buffers cannot be written whole) and one
// blocked in read(2) (the peer sends nothing), which a close(2) alone
// would not: a failure hangs in Close or Wait.
func TestSocketPumpCloseWakes(t *testing.T) {
	t.Setenv(SocketPumpsEnv, "1")
	client, server := tcpPair(t, 16<<10)
	sender := NewPumps(1<<20, 0, -1)
	sender.Start(client, true)
	// The first byte's arrival shows the write under way; it cannot end
	// before the peer reads about 1 MiB more.
	if _, err := io.ReadFull(server, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	sender.Close()
	if err := sender.Wait("sender"); err != nil {
		t.Fatal(err)
	}

	_, server2 := tcpPair(t, 0)
	receiver := NewPumps(4096, 0, -1)
	receiver.Start(server2, false)
	receiver.Close()
	if err := receiver.Wait("receiver"); err != nil {
		t.Fatal(err)
	}
}

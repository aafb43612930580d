//go:build linux

package bench

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// ClientSide is the end of a benchmark that opens the streams: the client
// namespace of the single-host topology, or this host's device in two-host
// mode (a *topo.Device is one).
type ClientSide interface {
	// Prepare applies a cell's MTU and segmentation offload to the client's
	// device and returns its state and what GSO on or off meant.
	Prepare(mtu int, gso bool) (offloads, gsoNote string, err error)
	// Do runs fn where the client's sockets belong (its network namespace).
	Do(fn func() error) error
}

// ServerSide is the end of a benchmark that accepts the streams: the server
// namespace of the single-host topology, or a kqbench server on a peer
// (package bench/remote).
type ServerSide interface {
	// Prepare applies a cell's MTU and segmentation offload to the server's
	// device and returns its state, for the record.
	Prepare(ctx context.Context, mtu int, gso bool) (offloads string, err error)
	// Available reports why the transport cannot run on the server, or nil.
	Available(transport string) error
	// Certificate is the benchmark certificate (DER) the server's TLS
	// transports present, or nil when they present this process's own.
	Certificate() []byte
	// Listen starts the server of one sample: it accepts streams, reads
	// each one's direction marker, and sinks or sends messages of size
	// bytes.
	Listen(ctx context.Context, transport string, o transport.Options, size int) (ServerSample, error)
}

// ServerSample is the server end of one sample.
type ServerSample interface {
	// Addr is the address the client dials.
	Addr() netip.AddrPort
	// Snapshot reads the bytes the server received so far and, for a
	// server on another host, that host's CPU counters.
	Snapshot(ctx context.Context) (ServerSnapshot, error)
	// Stop closes the listener and every stream, and says whether they
	// stopped.
	Stop(ctx context.Context) error
}

// ServerSnapshot is what a ServerSample reports at the start and the end of
// the measured window.
type ServerSnapshot struct {
	// Received counts the bytes the server read (the goodput of direction
	// up).
	Received int64 `json:"received"`
	// CPU is the server host's counters; nil when the server shares the
	// client's host, whose CPU the sample records already.
	CPU *host.CPUSnapshot `json:"cpu,omitempty"`
	// Counters are the server's --explain counters, in the snapshot that
	// ends the measured window, and CountersMissing those it could not
	// count.
	Counters        map[string]float64 `json:"counters,omitempty"`
	CountersMissing []string           `json:"counters_missing,omitempty"`
}

// localServer is the server namespace of the single-host topology; its
// streams run on cpu (-1: anywhere).
type localServer struct {
	t   *topo.Topology
	cpu int
}

func (s localServer) Prepare(_ context.Context, mtu int, gso bool) (string, error) {
	off, _, err := s.t.ServerDevice().Prepare(mtu, gso)
	return off, err
}

func (localServer) Available(string) error { return nil }
func (localServer) Certificate() []byte    { return nil }

func (s localServer) Listen(ctx context.Context, name string, o transport.Options, size int) (ServerSample, error) {
	tr, err := transport.Get(name)
	if err != nil {
		return nil, err
	}
	var ln transport.Listener
	if err := s.t.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		return nil, err
	}
	return localSample{ServeOn(ln, size, s.cpu)}, nil
}

type localSample struct{ s *StreamServer }

func (l localSample) Addr() netip.AddrPort { return l.s.Addr() }
func (l localSample) Snapshot(context.Context) (ServerSnapshot, error) {
	return ServerSnapshot{Received: l.s.Received()}, nil
}
func (l localSample) Stop(context.Context) error { return l.s.Close() }

// Direction markers: the first byte a client writes on a stream.
const (
	markUp   = 'U' // the client sends, the server counts
	markDown = 'D' // the server sends, the client counts
	markRR   = 'R' // request/response: the server answers requests (rr.go)
)

// streams runs the pumps of one end of a sample.
type streams struct {
	buf      []byte
	size     int
	cpu      int // the CPU the pumps run on, or -1
	stop     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     []io.ReadWriteCloser
	received atomic.Int64
}

func newStreams(size int) *streams {
	s := &streams{buf: make([]byte, size), size: size, cpu: -1, stop: make(chan struct{})}
	for i := range s.buf {
		s.buf[i] = byte(i * 7)
	}
	return s
}

func (p *streams) add(s io.ReadWriteCloser) {
	p.mu.Lock()
	p.open = append(p.open, s)
	p.mu.Unlock()
}

// pump sends messages on s until it fails or the end stops, or reads and
// counts until it fails. The caller has done wg.Add(1).
func (p *streams) pump(s io.ReadWriteCloser, send bool) {
	defer p.wg.Done()
	host.PinThread(p.cpu)
	if send {
		for {
			if _, err := s.Write(p.buf); err != nil {
				return
			}
			select {
			case <-p.stop:
				return
			default:
			}
		}
	}
	rb := make([]byte, max(p.size, 64<<10))
	for {
		n, err := s.Read(rb)
		p.received.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// closeStreams stops the pumps and closes every stream; first, if given,
// the connections (a stream closed under a blocked Write can leave the Write
// waiting, as quic-go's does; a closed connection never does).
func (p *streams) closeStreams(first ...io.Closer) {
	p.once.Do(func() {
		close(p.stop)
		for _, c := range first {
			c.Close()
		}
		p.mu.Lock()
		for _, s := range p.open {
			s.Close()
		}
		p.mu.Unlock()
	})
}

// wait waits up to 10s for the pumps to end.
func (p *streams) wait(name string) error {
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s: a stream did not stop within 10s of closing its connection", name)
	}
}

// StreamServer is the server end of a sample on a listener: it accepts
// streams, reads each one's direction marker, and counts what it receives
// (up) or sends messages (down). A kqbench server runs one per sample.
type StreamServer struct {
	ln     transport.Listener
	p      *streams
	cancel context.CancelFunc
}

// Serve starts serving streams of size-byte messages on ln, which it owns
// from now on.
func Serve(ln transport.Listener, size int) *StreamServer { return ServeOn(ln, size, -1) }

// ServeOn is Serve with the streams' reads and writes pinned to the CPU (-1:
// not pinned).
func ServeOn(ln transport.Listener, size, cpu int) *StreamServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &StreamServer{ln: ln, p: newStreams(size), cancel: cancel}
	p := s.p
	p.cpu = cpu
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			st, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			p.add(st)
			p.wg.Add(1)
			go func() {
				var m [1]byte
				if _, err := io.ReadFull(st, m[:]); err != nil {
					p.wg.Done()
					return
				}
				if m[0] == markRR {
					p.answer(st)
					return
				}
				p.pump(st, m[0] == markDown)
			}()
		}
	}()
	return s
}

// Addr is the listener's address.
func (s *StreamServer) Addr() netip.AddrPort { return s.ln.Addr() }

// Received counts the bytes read so far from every stream.
func (s *StreamServer) Received() int64 { return s.p.received.Load() }

// Close closes the listener (and with it the connections) and every stream,
// and waits for them to stop.
func (s *StreamServer) Close() error {
	s.cancel()
	s.p.closeStreams(s.ln)
	return s.p.wait("server")
}

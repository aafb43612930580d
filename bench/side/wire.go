//go:build linux

package side

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/host"
	"kquic.dev/bench/send"
	"kquic.dev/bench/transport"
)

// Direction markers: the first byte a client writes on a stream. A mode
// adds its own (RegisterStream).
const (
	MarkUp   = 'U' // the client sends, the server counts
	MarkDown = 'D' // the server sends, the client counts
	// MarkTagged: the client sends, the server counts, also under the tag
	// (the two bytes after the marker, big-endian: the client's connection
	// of a cell of several), which a snapshot reports
	// (ServerSnapshot.Tagged). TaggedMarker writes the three bytes.
	MarkTagged = 'T'
)

// A StreamHandler serves a stream after its marker until the stream ends,
// adding the bytes it reads to received.
type StreamHandler func(s io.ReadWriteCloser, received *atomic.Int64)

var (
	streamMu sync.RWMutex
	streams  = map[byte]StreamHandler{}
)

// RegisterStream adds the server of the streams whose first byte is
// marker: a mode's (the rr mode's answers requests), run by every
// StreamServer, local or on a kqbench server. A marker taken already
// panics: it is a program's error, found at start.
func RegisterStream(marker byte, h StreamHandler) {
	streamMu.Lock()
	defer streamMu.Unlock()
	if _, ok := streams[marker]; ok || marker == MarkUp || marker == MarkDown || marker == MarkTagged {
		panic(fmt.Sprintf("side: stream marker %q registered twice", marker))
	}
	streams[marker] = h
}

// streamHandler is the server of marker's streams, or nil.
func streamHandler(marker byte) StreamHandler {
	streamMu.RLock()
	defer streamMu.RUnlock()
	return streams[marker]
}

// Pumps runs the streams of one end of a sample: each one sends messages
// of one size until the end stops, or reads and counts.
type Pumps struct {
	buf      []byte
	size     int
	read     int // the bytes a read asks for
	cpu      int // the CPU the pumps run on, or -1
	stop     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     []io.ReadWriteCloser
	received atomic.Int64
	tagged   map[int]*atomic.Int64 // under mu

	// method is how the sending pumps send (SetSend; "": each stream's
	// Write), sent what they did, and sendErr the first failure of a
	// sender before the end stopped.
	method  string
	sent    send.Counters
	sendErr error
}

// SetSend makes the sending pumps started after it send by method m (a
// bench/send method; "" or send.Write: the stream's own Write) and count
// into the counters it returns.
func (p *Pumps) SetSend(m string) *send.Counters {
	if m == send.Write {
		m = ""
	}
	p.method = m
	return &p.sent
}

// SendErr is the first error of a sending pump's sender before the end
// stopped (a method the socket refuses), or nil.
func (p *Pumps) SendErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sendErr
}

func (p *Pumps) sendFailed(err error) {
	select {
	case <-p.stop:
		return // the end stopped under it
	default:
	}
	p.mu.Lock()
	if p.sendErr == nil {
		p.sendErr = err
	}
	p.mu.Unlock()
}

// NewPumps makes the pumps of size-byte messages, each read asking for
// read bytes (0: size or 64 KiB, whichever is larger), their reads and
// writes pinned to cpu (-1: not pinned).
func NewPumps(size, read, cpu int) *Pumps {
	if read <= 0 {
		read = max(size, 64<<10)
	}
	s := &Pumps{buf: make([]byte, size), size: size, read: read, cpu: cpu, stop: make(chan struct{})}
	for i := range s.buf {
		s.buf[i] = byte(i * 7)
	}
	return s
}

// Received counts the bytes the pumps have read.
func (p *Pumps) Received() int64 { return p.received.Load() }

// Start adds s to the streams that Close closes and starts its pump:
// sending messages (send) until it fails or the end stops, or reading and
// counting until it fails.
func (p *Pumps) Start(s io.ReadWriteCloser, send bool) {
	p.add(s)
	p.wg.Add(1)
	go p.pump(s, send)
}

func (p *Pumps) add(s io.ReadWriteCloser) {
	p.mu.Lock()
	p.open = append(p.open, s)
	p.mu.Unlock()
}

// TaggedMarker is what a client writes first on a stream it sends on,
// counted at the server under tag (0..65535).
func TaggedMarker(tag int) []byte { return []byte{MarkTagged, byte(tag >> 8), byte(tag)} }

// tag is the counter of the streams tagged t.
func (p *Pumps) tag(t int) *atomic.Int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tagged == nil {
		p.tagged = map[int]*atomic.Int64{}
	}
	c := p.tagged[t]
	if c == nil {
		c = new(atomic.Int64)
		p.tagged[t] = c
	}
	return c
}

// Tagged counts the bytes read from the tagged streams so far, by tag
// (nil: none came).
func (p *Pumps) Tagged() map[int]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tagged) == 0 {
		return nil
	}
	out := make(map[int]int64, len(p.tagged))
	for t, c := range p.tagged {
		out[t] = c.Load()
	}
	return out
}

// pump is Start's loop. The caller has done wg.Add(1).
func (p *Pumps) pump(s io.ReadWriteCloser, send bool) {
	p.pumpTagged(s, send, nil)
}

// pumpTagged is pump counting what it reads under a tag too (nil: not).
func (p *Pumps) pumpTagged(s io.ReadWriteCloser, send bool, tag *atomic.Int64) {
	defer p.wg.Done()
	host.PinThread(p.cpu)
	if ss := p.socketFor(s, send); ss != nil {
		if send {
			ss.send(p.buf, p.stop)
		} else {
			ss.receive(make([]byte, p.read), func(n int) {
				p.received.Add(int64(n))
				if tag != nil {
					tag.Add(int64(n))
				}
			})
		}
		return
	}
	if send && p.method != "" {
		p.sendBy(s)
		return
	}
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
	rb := make([]byte, p.read)
	for {
		n, err := s.Read(rb)
		p.received.Add(int64(n))
		if tag != nil {
			tag.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

// sendBy is a sending pump's loop with its send method's sender.
func (p *Pumps) sendBy(s io.ReadWriteCloser) {
	snd, err := send.New(p.method, s, p.buf, &p.sent)
	if err != nil {
		p.sendFailed(err)
		return
	}
	defer snd.Close()
	for {
		if err := snd.Send(); err != nil {
			p.sendFailed(err)
			return
		}
		select {
		case <-p.stop:
			return
		default:
		}
	}
}

// socketFor is s as a socketStream for a pump that sends (send) or
// receives, or nil: a sender with a send method of its own (SetSend) sends
// by it.
func (p *Pumps) socketFor(s io.ReadWriteCloser, send bool) *socketStream {
	if send && p.method != "" {
		return nil
	}
	return p.socket(s)
}

// socket is s as a socketStream, which Close closes in its place, or nil
// (see asSocket).
func (p *Pumps) socket(s io.ReadWriteCloser) *socketStream {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.open, s)
	select {
	case <-p.stop:
		return nil // Close has closed s, or is closing it
	default:
	}
	ss := asSocket(s)
	if i < 0 || ss == nil {
		return nil
	}
	p.open[i] = ss
	return ss
}

// Close stops the pumps and closes every stream; first, if given, the
// connections (a stream closed under a blocked Write can leave the Write
// waiting, as quic-go's does; a closed connection never does). Only the
// first call does anything.
func (p *Pumps) Close(first ...io.Closer) {
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

// Wait waits up to 10s for the pumps to end; name names the end in the
// error.
func (p *Pumps) Wait(name string) error {
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
// (up), sends messages (down), or runs the marker's registered server
// (RegisterStream). A kqbench server runs one per sample.
type StreamServer struct {
	ln     transport.Listener
	p      *Pumps
	cancel context.CancelFunc
}

// Serve starts serving streams of size-byte messages on ln, which it owns
// from now on, each read asking for read bytes (0: size or 64 KiB, whichever
// is larger).
func Serve(ln transport.Listener, size, read int) *StreamServer { return ServeOn(ln, size, read, -1) }

// ServeOn is Serve with the streams' reads and writes pinned to the CPU (-1:
// not pinned).
func ServeOn(ln transport.Listener, size, read, cpu int) *StreamServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &StreamServer{ln: ln, p: NewPumps(size, read, cpu), cancel: cancel}
	p := s.p
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
				if m[0] == MarkTagged {
					var t [2]byte
					if _, err := io.ReadFull(st, t[:]); err != nil {
						p.wg.Done()
						return
					}
					p.pumpTagged(st, false, p.tag(int(t[0])<<8|int(t[1])))
					return
				}
				if h := streamHandler(m[0]); h != nil {
					defer p.wg.Done()
					h(st, &p.received)
					return
				}
				p.pump(st, m[0] == MarkDown)
			}()
		}
	}()
	return s
}

// Addr is the listener's address.
func (s *StreamServer) Addr() netip.AddrPort { return s.ln.Addr() }

// Received counts the bytes read so far from every stream.
func (s *StreamServer) Received() int64 { return s.p.received.Load() }

// Tagged counts the bytes read so far from the tagged streams, by tag
// (MarkTagged; nil: none came).
func (s *StreamServer) Tagged() map[int]int64 { return s.p.Tagged() }

// Close closes the listener (and with it the connections) and every stream,
// and waits for them to stop.
func (s *StreamServer) Close() error {
	s.cancel()
	s.p.Close(s.ln)
	return s.p.Wait("server")
}

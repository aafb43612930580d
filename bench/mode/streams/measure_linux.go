//go:build linux

package streams

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

func init() {
	mode.Register(Mode{mode.Common{Mode: Name, SingleHost: "--mode streams runs on the single-host topology only (its server checks the objects in this process)"}})
}

// Mode is the streams mode.
type Mode struct{ mode.Common }

// Sample measures one sample of the cell on the single-host topology.
func (Mode) Sample(ctx context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	ls, ok := env.Local()
	if !ok {
		return results.Sample{}, errors.New("streams mode runs on the single-host topology only")
	}
	tr, o, probes, err := env.Start(c, i)
	if err != nil {
		return results.Sample{}, err
	}
	return measure(ctx, ls.T, tr, c, o, newObjects(c.Streams, c.Size), probes)
}

// Summary is the goodput's median (all the objects over the time the last
// one took), the samples and the spread.
func (Mode) Summary(r *results.CellResult) string {
	return mode.GoodputSummary(r)
}

// muxFrame is the largest frame of the TCP multiplexing: HTTP/2's default
// SETTINGS_MAX_FRAME_SIZE.
const muxFrame = 16 << 10

// Stream markers: the first byte of a connection or stream in streams mode.
const (
	markObject = 'S' // one object: 4-byte index, 8-byte length, the bytes
	markMux    = 'M' // frames: 4-byte index, 4-byte length, the bytes
)

// objects are the payloads of a streams-mode sample and their hashes.
type objects struct {
	data [][]byte
	sums [][32]byte
}

func newObjects(n, size int) *objects {
	o := &objects{data: make([][]byte, n), sums: make([][32]byte, n)}
	for i := range n {
		var seed [32]byte
		binary.BigEndian.PutUint32(seed[:], uint32(i)+1)
		o.data[i] = make([]byte, size)
		rand.NewChaCha8(seed).Read(o.data[i])
		o.sums[i] = sha256.Sum256(o.data[i])
	}
	return o
}

// objectSink is the server of a streams-mode sample: it reads the objects
// from every stream it accepts, hashes them, and records when each was
// complete.
type objectSink struct {
	ln    transport.Listener
	objs  *objects
	mu    sync.Mutex
	done  []time.Time
	err   error
	left  int
	all   chan struct{}
	wg    sync.WaitGroup
	close []io.Closer
}

// fail records the sample's first error, unless every object is complete
// (the streams then end as the sample closes them).
func (s *objectSink) fail(err error) {
	s.mu.Lock()
	if s.err == nil && s.left > 0 {
		s.err = err
		s.left = -1
		close(s.all)
	}
	s.mu.Unlock()
}

// complete records object i as received with the hash sum.
func (s *objectSink) complete(i int, sum [32]byte) {
	at := time.Now()
	if i < 0 || i >= len(s.done) {
		s.fail(fmt.Errorf("server: object %d of %d", i, len(s.done)))
		return
	}
	if sum != s.objs.sums[i] {
		s.fail(fmt.Errorf("server: object %d arrived with SHA-256 %x, sent with %x", i, sum, s.objs.sums[i]))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done[i].IsZero() || s.left <= 0 {
		return
	}
	s.done[i] = at
	if s.left--; s.left == 0 {
		close(s.all)
	}
}

func (s *objectSink) serve(ctx context.Context) {
	defer s.wg.Done()
	for {
		st, err := s.ln.Accept(ctx)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.close = append(s.close, st)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.read(bufio.NewReaderSize(st, 256<<10)); err != nil && !errors.Is(err, io.EOF) {
				s.fail(fmt.Errorf("server: %w", err))
			}
		}()
	}
}

func (s *objectSink) read(r *bufio.Reader) error {
	mark, err := r.ReadByte()
	if err != nil {
		return err
	}
	switch mark {
	case markObject:
		var h [12]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return err
		}
		i, n := int(binary.BigEndian.Uint32(h[:])), int64(binary.BigEndian.Uint64(h[4:]))
		hh := sha256.New()
		if _, err := io.CopyN(hh, r, n); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		s.complete(i, [32]byte(hh.Sum(nil)))
		return nil
	case markMux:
		hs := map[int]interface {
			io.Writer
			Sum([]byte) []byte
		}{}
		got := map[int]int{}
		size := len(s.objs.data[0])
		buf := make([]byte, muxFrame)
		for {
			var h [8]byte
			if _, err := io.ReadFull(r, h[:]); err != nil {
				return err
			}
			i, n := int(binary.BigEndian.Uint32(h[:])), int(binary.BigEndian.Uint32(h[4:]))
			if n > muxFrame {
				return fmt.Errorf("frame of %d bytes for object %d", n, i)
			}
			if _, err := io.ReadFull(r, buf[:n]); err != nil {
				return err
			}
			if hs[i] == nil {
				hs[i] = sha256.New()
			}
			hs[i].Write(buf[:n])
			if got[i] += n; got[i] == size {
				s.complete(i, [32]byte(hs[i].Sum(nil)))
			}
		}
	}
	return fmt.Errorf("stream marker %q", mark)
}

// measure runs one streams-mode sample of a cell on the single-host
// topology: the objects start together, and each one's completion time is
// from the start until the server has all its bytes.
func measure(ctx context.Context, t *topo.Topology, tr transport.Transport, c matrix.Cell, o transport.Options, objs *objects, probes []mode.Probe) (results.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	var ln transport.Listener
	if err := t.Server.Do(func() (err error) {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		return results.Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
	}
	sink := &objectSink{ln: ln, objs: objs, done: make([]time.Time, c.Streams), left: c.Streams, all: make(chan struct{})}
	sctx, scancel := context.WithCancel(ctx)
	sink.wg.Add(1)
	go sink.serve(sctx)
	var d transport.Dialer
	defer func() {
		scancel()
		if d != nil {
			d.Close()
		}
		sink.stop()
	}()
	if err := t.ClientDevice().Do(func() (err error) {
		d, err = tr.Dial(ctx, ln.Addr(), o)
		return err
	}); err != nil {
		return results.Sample{}, fmt.Errorf("%s client: %w", tr.Name(), err)
	}
	// Open first (the handshakes of separate connections are not part of an
	// object's time: HTTP clients keep connections open), then start.
	streams, err := openStreams(ctx, t, d, c)
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	if err != nil {
		return results.Sample{}, fmt.Errorf("%s: open stream: %w", tr.Name(), err)
	}
	// The probes' window opens just before the objects start and closes
	// once they are all in.
	pw := mode.NewWindow(probes)
	defer pw.Stop()
	if err := pw.Open(ctx); err != nil {
		return results.Sample{}, err
	}
	start := time.Now()
	if err := sendObjects(ctx, tr.Name(), streams, c, objs, sink); err != nil {
		return results.Sample{}, err
	}
	counted, missing, err := pw.Close(ctx)
	if err != nil {
		return results.Sample{}, err
	}
	smp := results.Sample{Streams: c.Streams, Finished: time.Now().UTC(), Counters: counted, CountersMissing: missing}
	var secs Seconds
	for _, at := range sink.done {
		sec := at.Sub(start).Seconds()
		secs = append(secs, sec)
		smp.Seconds = max(smp.Seconds, sec)
	}
	if len(secs) > 0 {
		smp.Payload = &secs
	}
	smp.Bytes = int64(c.Streams) * int64(c.Size)
	smp.Bps = float64(smp.Bytes) * 8 / smp.Seconds
	return smp, nil
}

// stop closes the sink's listener and the connections it accepted, and
// waits for its goroutines.
func (s *objectSink) stop() {
	s.ln.Close()
	s.mu.Lock()
	for _, cl := range s.close {
		cl.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// openStreams opens a cell's streams from the client's namespace: one to
// multiplex the objects on, or one per object. The streams opened are
// returned also with an error, for the caller to close.
func openStreams(ctx context.Context, t *topo.Topology, d transport.Dialer, c matrix.Cell) ([]io.ReadWriteCloser, error) {
	n := 1
	if !c.Mux {
		n = c.Streams
	}
	var streams []io.ReadWriteCloser
	for range n {
		var s io.ReadWriteCloser
		err := t.ClientDevice().Do(func() (err error) {
			s, err = d.Open(ctx)
			return err
		})
		if err != nil {
			return streams, err
		}
		streams = append(streams, s)
	}
	return streams, nil
}

// sendObjects sends the objects on the streams (all on the first when
// multiplexed) and waits until the sink has them all.
func sendObjects(ctx context.Context, name string, streams []io.ReadWriteCloser, c matrix.Cell, objs *objects, sink *objectSink) error {
	n := len(streams)
	sendErr := make(chan error, n)
	if c.Mux {
		go func() { sendErr <- sendMux(streams[0], objs) }()
	} else {
		for i, s := range streams {
			go func() { sendErr <- sendObject(s, i, objs.data[i]) }()
		}
	}
	for range n {
		select {
		case err := <-sendErr:
			if err != nil {
				return fmt.Errorf("%s client: %w", name, err)
			}
		case <-sink.all:
		case <-ctx.Done():
			return fmt.Errorf("%s: objects not sent: %w", name, ctx.Err())
		}
	}
	select {
	case <-sink.all:
	case <-ctx.Done():
		return fmt.Errorf("%s: %d of %d objects not complete: %w", name, sink.left, c.Streams, ctx.Err())
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	return sink.err
}

// sendObject sends one object on its own stream.
func sendObject(s io.Writer, i int, data []byte) error {
	var h [13]byte
	h[0] = markObject
	binary.BigEndian.PutUint32(h[1:], uint32(i))
	binary.BigEndian.PutUint64(h[5:], uint64(len(data)))
	if _, err := s.Write(h[:]); err != nil {
		return err
	}
	_, err := s.Write(data)
	return err
}

// sendMux sends every object over one connection, a frame of each in turn.
func sendMux(s io.Writer, objs *objects) error {
	w := bufio.NewWriterSize(s, 4*(muxFrame+8))
	w.WriteByte(markMux)
	for off := 0; off < len(objs.data[0]); off += muxFrame {
		for i, d := range objs.data {
			n := min(muxFrame, len(d)-off)
			var h [8]byte
			binary.BigEndian.PutUint32(h[:], uint32(i))
			binary.BigEndian.PutUint32(h[4:], uint32(n))
			w.Write(h[:])
			if _, err := w.Write(d[off : off+n]); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

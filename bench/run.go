package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// Runner runs a matrix on this host.
type Runner struct {
	Spec Spec
	// Out is the results file, written after every cell ("" for none).
	Out string
	// Resume continues the run recorded in Out: cells already measured are
	// kept, failed ones run again. Without it an existing Out is an error.
	Resume bool
	// Command is recorded in the document.
	Command []string
	// Progress is called after every sample and every cell not measured.
	Progress func(done, total int, c Cell)
	// Log receives one line per cell (default: discarded).
	Log io.Writer
}

// Run runs every cell that is not done yet and returns the document. When
// ctx ends it stops after saving what finished, and returns ctx's error with
// the document.
func (r *Runner) Run(ctx context.Context) (*Document, error) {
	if err := r.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	doc, err := r.document()
	if err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("matrix: needs root to create the network namespaces and veth pair (run as root, or in the guest: kqbench matrix --vm)")
	}
	t, err := topo.New()
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	defer t.Close()

	cells := r.Spec.Cells()
	total := len(cells) * r.Spec.Repeat
	done := 0
	progress := func(c Cell, n int) {
		done += n
		if r.Progress != nil {
			r.Progress(done, total, c)
		}
	}
	save := func() error {
		if r.Out == "" {
			return nil
		}
		return doc.Save(r.Out)
	}
	type group struct {
		mtu int
		gso bool
	}
	var cur *group
	var groupErr error
	var offloads, gsoNote string
	for _, c := range cells {
		if err := ctx.Err(); err != nil {
			save()
			return doc, err
		}
		if prev, ok := doc.Lookup(c); ok && prev.Status != StatusFailed {
			progress(c, r.Spec.Repeat)
			continue
		}
		res := CellResult{Cell: c, Key: c.Key()}
		counted := 0
		tr, _ := transport.Get(c.Transport)
		opts := transport.Options{Crypto: c.Crypto, GSO: c.GSO}
		if err := tr.Available(); err != nil {
			res.Status, res.Note = StatusUnavailable, err.Error()
		} else if ok, note := tr.Support(opts); !ok {
			res.Status, res.Note = StatusNA, note
		} else {
			res.GSONote = note
			if cur == nil || cur.mtu != c.MTU || cur.gso != c.GSO {
				cur = &group{c.MTU, c.GSO}
				groupErr = t.SetMTU(c.MTU)
				if groupErr == nil {
					gsoNote, groupErr = t.SetGSO(c.GSO)
				}
				offloads, _ = t.Offloads()
				if groupErr == nil {
					fmt.Fprintf(r.Log, "devices: %s (%s)\n", offloads, gsoNote)
				}
			}
			res.Offloads = offloads + "; " + gsoNote
			if groupErr != nil {
				res.Status, res.Error = StatusFailed, groupErr.Error()
			} else {
				for i := 0; i < r.Spec.Repeat; i++ {
					s, err := runSample(ctx, t, tr, c, opts, r.Spec.Warmup, r.Spec.Time)
					progress(c, 1)
					counted++
					if err != nil {
						if ctx.Err() != nil {
							save()
							return doc, ctx.Err()
						}
						res.Status, res.Error = StatusFailed, err.Error()
						break
					}
					res.Samples = append(res.Samples, s)
				}
				if res.Status == "" {
					res.Status = StatusOK
					res.summarize()
				}
			}
		}
		progress(c, r.Spec.Repeat-counted)
		doc.put(res)
		fmt.Fprintf(r.Log, "%s: %s\n", c.Key(), summaryLine(&res))
		if err := save(); err != nil {
			return doc, err
		}
	}
	doc.Complete = true
	return doc, save()
}

func summaryLine(r *CellResult) string {
	switch r.Status {
	case StatusOK:
		s := fmt.Sprintf("%.0f Mbit/s (median of %d, spread %.0f%%)", r.MedianBps/1e6, len(r.Samples), r.Spread*100)
		if r.WideSpread {
			s += " WIDE SPREAD"
		}
		return s
	case StatusFailed:
		return "failed: " + r.Error
	}
	return r.Status + ": " + r.Note
}

func (r *Runner) document() (*Document, error) {
	if r.Out != "" {
		if _, err := os.Stat(r.Out); err == nil {
			if !r.Resume {
				return nil, fmt.Errorf("matrix: %s: %w; pass --resume to continue it, or choose another --out", r.Out, ErrExists)
			}
			d, err := Load(r.Out)
			if err != nil {
				return nil, fmt.Errorf("matrix: resume: %w", err)
			}
			d.Spec = r.Spec
			d.Complete = false
			return d, nil
		}
	}
	return &Document{Schema: SchemaVersion, Started: time.Now().UTC(), Command: r.Command, Env: environment(), Spec: r.Spec}, nil
}

func environment() Environment {
	e := CurrentEnvironment()
	e.Transports = map[string]string{}
	for _, n := range transport.Names() {
		t, _ := transport.Get(n)
		if err := t.Available(); err != nil {
			e.Transports[n] = "unavailable: " + err.Error()
		} else {
			e.Transports[n] = "available"
		}
	}
	return e
}

// Direction markers: the first byte a client writes on a stream.
const (
	markUp   = 'U' // the client sends, the server counts
	markDown = 'D' // the server sends, the client counts
)

// runSample measures one repeat of a cell.
func runSample(ctx context.Context, t *topo.Topology, tr transport.Transport, c Cell, o transport.Options, warmup, dur time.Duration) (_ Sample, rerr error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+dur+60*time.Second)
	defer cancel()
	var (
		ln  transport.Listener
		d   transport.Dialer
		err error
	)
	if err := t.Server.Do(func() error {
		ln, err = tr.Listen(ctx, netip.AddrPortFrom(topo.ServerAddr, 0), o)
		return err
	}); err != nil {
		return Sample{}, fmt.Errorf("%s server: %w", tr.Name(), err)
	}
	var once sync.Once
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var streams []io.ReadWriteCloser
	var mu sync.Mutex
	// Connections first: a stream closed under a blocked Write can leave
	// the Write waiting (quic-go), a closed connection never does.
	shutdown := func() {
		once.Do(func() {
			close(stop)
			if d != nil {
				d.Close()
			}
			ln.Close()
			mu.Lock()
			for _, s := range streams {
				s.Close()
			}
			mu.Unlock()
		})
	}
	defer func() {
		shutdown()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			if rerr == nil {
				rerr = fmt.Errorf("%s: a stream did not stop within 10s of closing its connection", tr.Name())
			}
		}
	}()
	if err := t.Client.Do(func() error {
		d, err = tr.Dial(ctx, ln.Addr(), o)
		return err
	}); err != nil {
		return Sample{}, fmt.Errorf("%s client: %w", tr.Name(), err)
	}

	var received atomic.Int64
	buf := make([]byte, c.Size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	pump := func(s io.ReadWriteCloser, send bool) {
		defer wg.Done()
		if send {
			for {
				if _, err := s.Write(buf); err != nil {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}
		rb := make([]byte, max(c.Size, 64<<10))
		for {
			n, err := s.Read(rb)
			received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
	// The server side: a marker byte says which way the data goes.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			s, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			streams = append(streams, s)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				var m [1]byte
				if _, err := io.ReadFull(s, m[:]); err != nil {
					return
				}
				wg.Add(1)
				pump(s, m[0] == markDown)
			}()
		}
	}()
	mark := byte(markUp)
	if c.Direction == "down" {
		mark = markDown
	}
	for i := 0; i < c.Streams; i++ {
		var s io.ReadWriteCloser
		if err := t.Client.Do(func() error {
			s, err = d.Open(ctx)
			return err
		}); err != nil {
			return Sample{}, fmt.Errorf("%s: open stream %d: %w", tr.Name(), i, err)
		}
		mu.Lock()
		streams = append(streams, s)
		mu.Unlock()
		if _, err := s.Write([]byte{mark}); err != nil {
			return Sample{}, fmt.Errorf("%s: stream %d: %w", tr.Name(), i, err)
		}
		wg.Add(1)
		go pump(s, mark == markUp)
	}

	sleep := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := sleep(warmup); err != nil {
		return Sample{}, err
	}
	b0, c0 := received.Load(), mustCPU()
	if err := sleep(dur); err != nil {
		return Sample{}, err
	}
	b1, c1 := received.Load(), mustCPU()
	shutdown()
	secs := c1.at.Sub(c0.at).Seconds()
	if b1 == b0 {
		return Sample{}, fmt.Errorf("%s: no data arrived in %v", tr.Name(), dur)
	}
	cpu, _ := cpuBetween(c0, c1)
	return Sample{
		Bytes: b1 - b0, Seconds: secs, Bps: float64(b1-b0) * 8 / secs, CPU: cpu,
		Streams: c.Streams, Warmup: warmup.Seconds(), Finished: time.Now().UTC(),
	}, nil
}

func mustCPU() cpuSnap {
	s, _ := readCPU()
	return s
}

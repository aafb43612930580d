//go:build linux

package transport

import (
	"context"
	"errors"
	"io"
	"sync"
)

// hub turns "accept connections, then accept streams on each" into one
// stream of streams, for the QUIC transports.
type hub struct {
	ctx     context.Context
	cancel  context.CancelFunc
	streams chan io.ReadWriteCloser
	mu      sync.Mutex
	err     error
	conns   []io.Closer
	wg      sync.WaitGroup
}

// acceptConn waits for a connection and returns its stream acceptor and
// closer.
type acceptConn func(ctx context.Context) (streams func(context.Context) (io.ReadWriteCloser, error), closer io.Closer, err error)

func newHub(accept acceptConn) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{ctx: ctx, cancel: cancel, streams: make(chan io.ReadWriteCloser, 64)}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			next, closer, err := accept(ctx)
			if err != nil {
				h.mu.Lock()
				h.err = err
				h.mu.Unlock()
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, closer)
			h.mu.Unlock()
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				for {
					s, err := next(ctx)
					if err != nil {
						return
					}
					select {
					case h.streams <- s:
					case <-ctx.Done():
						s.Close()
						return
					}
				}
			}()
		}
	}()
	return h
}

func (h *hub) accept(ctx context.Context) (io.ReadWriteCloser, error) {
	select {
	case s := <-h.streams:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.ctx.Done():
		return nil, errors.New("listener closed")
	}
}

// close stops accepting and closes every connection; closeListener must
// make the pending connection accept return.
func (h *hub) close(closeListener func() error) error {
	h.cancel()
	err := closeListener()
	h.mu.Lock()
	for _, c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
	return err
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

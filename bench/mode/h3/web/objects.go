package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"kquic.dev/bench/latency"
)

// ObjectsOptions shape the small-objects workload.
type ObjectsOptions struct {
	// Conns connections, each with Streams requests in flight (h2load's
	// -c and -m), of Size-byte objects.
	Conns, Streams int
	Size           int64
	// Warmup runs before the Duration counted.
	Warmup, Duration time.Duration
}

func (o ObjectsOptions) check() error {
	if o.Conns < 1 || o.Streams < 1 || o.Size < 0 || o.Size > MaxObject || o.Duration <= 0 || o.Warmup < 0 {
		return fmt.Errorf("web: objects %+v: want conns and streams >= 1, a size from 0 to %d and a positive duration", o, MaxObject)
	}
	return nil
}

// Objects has Conns connections with Streams requests in flight each
// fetch /obj/Size back to back for Warmup then Duration, every body
// checked. Requests and Bytes count what completed inside Duration (a
// request in flight at its end is not counted), Latency each request's
// time; every failed request, warmup included, is counted in Errors and
// its worker goes on.
func Objects(ctx context.Context, c *Client, o ObjectsOptions) (Result, error) {
	if err := c.check(); err != nil {
		return Result{}, err
	}
	if err := o.check(); err != nil {
		return Result{}, err
	}
	rts := make([]http.RoundTripper, 0, o.Conns)
	defer func() {
		for _, rt := range rts {
			closeRT(rt)
		}
	}()
	for range o.Conns {
		rt, err := open(ctx, c, nil)
		if err != nil {
			return Result{}, err
		}
		rts = append(rts, rt)
	}
	r := newResult("objects", c, rts[0])
	r.Size, r.Conns, r.Streams = o.Size, o.Conns, o.Streams
	url := fmt.Sprintf("%s/obj/%d", c.URL, o.Size)
	from := time.Now().Add(o.Warmup)
	until := from.Add(o.Duration)
	ctx, cancel := context.WithDeadline(ctx, until.Add(30*time.Second))
	defer cancel()
	workers := make([]*objectWorker, 0, o.Conns*o.Streams)
	var wg sync.WaitGroup
	for _, rt := range rts {
		for range o.Streams {
			f, err := newFetch(ctx, rt, http.MethodGet, url)
			if err != nil {
				return r, err
			}
			w := &objectWorker{f: f, hist: latency.New()}
			workers = append(workers, w)
			wg.Go(func() { w.run(o.Size, from, until) })
		}
	}
	wg.Wait()
	hist := latency.New()
	for _, w := range workers {
		hist.Merge(w.hist)
		r.Requests += w.requests
		r.Errors.Merge(w.errs)
	}
	r.Bytes, r.Seconds = r.Requests*o.Size, o.Duration.Seconds()
	s := hist.Summary()
	r.Latency, r.Histogram = &s, hist
	if r.Requests == 0 {
		return r, fmt.Errorf("web: %s objects: no request completed in %v: %s", c.Name, o.Duration, r.Errors)
	}
	return r, nil
}

// objectWorker is one request in flight, repeated.
type objectWorker struct {
	f        *fetch
	hist     *latency.Histogram
	requests int64
	errs     Errors
}

func (w *objectWorker) run(size int64, from, until time.Time) {
	for {
		start := time.Now()
		if !start.Before(until) {
			return
		}
		_, total, _, kind, err := w.f.do(size)
		end := time.Now()
		counted := !start.Before(from) && !end.After(until)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				w.errs.Add("deadline", err)
				return
			}
			w.errs.Add(kind, err)
			continue
		}
		if counted {
			w.requests++
			w.hist.Record(total)
		}
	}
}

package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"kquic.dev/bench/latency"
	"kquic.dev/kquic"
)

// Request/response mode (perf_test -d 1). The client opens the first
// bidirectional stream with a request of ReqLen bytes and reads the
// response, unmeasured; then it sends NumReqs requests one at a time on the
// same stream, each after the previous response, timing each round trip,
// and ends the stream with an empty FIN. The server answers every read of
// the stream that returned data with RspLen bytes, until the FIN; it reads
// at most MaxReqLen bytes at a time, so a request is one read as long as it
// is no longer than that (perf_test refuses longer ones).
const (
	MaxReqLen  = 1024   // perf_test's REQ_MSG_LEN: the largest -q, and its server's read size
	MaxRspLen  = 1024   // perf_test's RSP_MSG_LEN: the largest -r its programs take
	DefReqLen  = 1024   // perf_test's default -q
	DefRspLen  = 1024   // perf_test's default -r
	DefNumReqs = 100000 // perf_test's default -n
)

// RRResult is one request/response client run.
type RRResult struct {
	Requests       int64
	ReqLen, RspLen int
	// Elapsed is the sum of the round trips, as perf_test counts it.
	Elapsed time.Duration
	// Latency holds every round trip.
	Latency *latency.Histogram
}

// PerSecond is the rate of requests over the time spent in round trips, as
// perf_test computes it.
func (r RRResult) PerSecond() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// String prints the result as perf_test does (its lines, in µs), and the
// percentiles.
func (r RRResult) String() string {
	s := r.Latency.Summary()
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	return fmt.Sprintf(`=== Request/Response Results ===
Total requests:   %d
Request size:     %d bytes
Response size:    %d bytes

Latency:
  Average:        %.2f us (%.3f ms)
  Minimum:        %.0f us (%.3f ms)
  Maximum:        %.0f us (%.3f ms)
  p50:            %.1f us
  p90:            %.1f us
  p99:            %.1f us
  p99.9:          %.1f us
  p99.99:         %.1f us

Throughput:
  Requests/sec:   %.2f
  Total time:     %.3f sec`,
		r.Requests, r.ReqLen, r.RspLen,
		us(r.Elapsed)/float64(r.Requests), r.Elapsed.Seconds()*1e3/float64(r.Requests),
		us(s.Min), s.Min.Seconds()*1e3, us(s.Max), s.Max.Seconds()*1e3,
		us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.P9999),
		r.PerSecond(), r.Elapsed.Seconds())
}

// RunRR is perf_test's client in request/response mode on a new stream of c
// (the first one, ID 0, on a fresh connection). It reads each response to
// its full rspLen bytes (perf_test's client takes one read of up to 1024,
// which is the same for responses that fit a packet), and runs on one
// thread, locked, as perf_test does.
func RunRR(ctx context.Context, c *kquic.Conn, reqLen, rspLen int, n int64) (RRResult, error) {
	if reqLen <= 0 || reqLen > MaxReqLen || rspLen <= 0 || n <= 0 {
		return RRResult{}, fmt.Errorf("perftest: request length %d (1..%d), response length %d and requests %d must be positive", reqLen, MaxReqLen, rspLen, n)
	}
	req, rsp := make([]byte, reqLen), make([]byte, rspLen)
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return RRResult{}, fmt.Errorf("perftest: open stream: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		s.SetDeadline(dl)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	trip := func(i int64) error {
		if _, err := s.Write(req); err != nil {
			return fmt.Errorf("perftest: request %d: %w", i, err)
		}
		if _, err := io.ReadFull(s, rsp); err != nil {
			return fmt.Errorf("perftest: response %d: %w (is the server perf_test or kqbench perf with -d 1, and -r the same on both ends?)", i, err)
		}
		return nil
	}
	if err := trip(0); err != nil { // opens the stream, unmeasured
		return RRResult{}, err
	}
	r := RRResult{Requests: n, ReqLen: reqLen, RspLen: rspLen, Latency: latency.New()}
	for i := int64(0); i < n; i++ {
		t0 := time.Now()
		if err := trip(i + 1); err != nil {
			return RRResult{}, err
		}
		d := time.Since(t0)
		r.Elapsed += d
		r.Latency.Record(d)
	}
	if err := s.Close(); err != nil {
		return RRResult{}, fmt.Errorf("perftest: send FIN: %w", err)
	}
	return r, nil
}

// ServeRR is perf_test's server in request/response mode: for each
// connection accepted on ln it answers every read of the first stream with
// rspLen bytes until the client's FIN, then waits for the client to close.
// Connections are served concurrently. It reports the requests each client
// made to report (if not nil; one call at a time), and returns once the
// connections in progress are done, when ctx ends or ln is closed.
func ServeRR(ctx context.Context, ln *kquic.Listener, rspLen int, report func(requests int64, err error)) error {
	if rspLen <= 0 {
		return fmt.Errorf("perftest: response length %d must be positive", rspLen)
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	defer wg.Wait()
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kquic.ErrClosed) {
				return nil
			}
			return fmt.Errorf("perftest: accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := serveRRConn(ctx, c, rspLen)
			if report != nil {
				mu.Lock()
				report(n, err)
				mu.Unlock()
			}
		}()
	}
}

func serveRRConn(ctx context.Context, c *kquic.Conn, rspLen int) (int64, error) {
	defer c.Close()
	s, err := c.AcceptStream(ctx)
	if err != nil {
		return 0, fmt.Errorf("perftest: accept the client's stream: %w", err)
	}
	req, rsp := make([]byte, MaxReqLen), make([]byte, rspLen)
	var n int64
	for {
		m, err := s.Read(req)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("perftest: read request %d: %w", n+1, err)
		}
		if m == 0 {
			continue
		}
		n++
		if _, err := s.Write(rsp); err != nil {
			return n, fmt.Errorf("perftest: response %d: %w", n, err)
		}
	}
	// The client closes once it has sent its FIN.
	s.Close()
	select {
	case <-c.Done():
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return n, nil
}

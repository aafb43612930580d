// Package perftest speaks the throughput mode of the kernel QUIC module's
// own benchmark, tests/perf_test.c, over kquic: Run is its client and Serve
// its server, on the wire alike, so that either end can be the C program and
// the other the Go API. That is how the Go bindings are held to the module's
// own figures: same protocol, same message sizes, same kernel.
//
// The protocol: the client opens the first bidirectional stream (ID 0) on a
// connection with ALPN "sample", writes the total in messages of one size,
// the last with FIN, and waits for the server's answer "recv done" with FIN
// on the same stream; the time from the first write to the answer gives the
// throughput. perf_test prints it in binary units ("Mbits/sec" of 1024*1024
// bits, with kilobytes of 1024); Result.String does the same, and gives
// MB/s (decimal) beside it.
package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"kquic.dev/kquic"
)

// ALPN is the protocol perf_test's client and server agree on.
const ALPN = "sample"

// Answer is what the server sends back once it has read the whole stream.
const Answer = "recv done"

// MaxMsgLen is the largest message perf_test itself takes (-m); Run takes
// more.
const MaxMsgLen = 4096

// Result is one client run.
type Result struct {
	MsgLen  int           // bytes per write
	Bytes   int64         // bytes written, all of them acknowledged by the answer
	Elapsed time.Duration // from the first write to the answer
}

// MBps is the throughput in MB/s (10^6 bytes per second).
func (r Result) MBps() float64 { return float64(r.Bytes) / r.Elapsed.Seconds() / 1e6 }

// PerfTestMbps is the throughput as perf_test prints it: bits in units of
// 1024*1024 per second, over whole milliseconds.
func (r Result) PerfTestMbps() float64 {
	ms := r.Elapsed.Milliseconds()
	if ms == 0 {
		ms = 1
	}
	return float64(r.Bytes) * 8 * 1000 / 1024 / float64(ms) / 1024
}

func (r Result) String() string {
	return fmt.Sprintf("%d bytes in %d-byte messages in %v: %.1f Mbits/sec (perf_test's units), %.2f MB/s",
		r.Bytes, r.MsgLen, r.Elapsed.Round(time.Millisecond), r.PerfTestMbps(), r.MBps())
}

// Run is perf_test's client: it sends total bytes in msgLen writes on a new
// bidirectional stream of c (the first one, ID 0, on a fresh connection), the
// last with FIN, and waits for the server's answer. It sends from one
// thread, locked for the run, as perf_test does.
func Run(ctx context.Context, c *kquic.Conn, msgLen int, total int64) (Result, error) {
	if msgLen <= 0 || total <= 0 {
		return Result{}, fmt.Errorf("perftest: message length %d and total %d must both be positive", msgLen, total)
	}
	msg := make([]byte, msgLen)
	for i := range msg {
		msg[i] = byte(i)
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("perftest: open stream: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		s.SetDeadline(dl)
	}
	// Like perf_test, which is one thread, send from one thread: a
	// goroutine that spends its time in sendmsg otherwise resumes on
	// another thread whenever the runtime has handed its P on, and hops
	// between threads and CPUs every few milliseconds. Measured under
	// emulation (1 KiB messages, 32 MiB, 10 interleaved runs against
	// perf_test's server, means): 87.6 Mbit/s unlocked, 91.2 locked,
	// perf_test's own client 95.4. Over a veth pair (MTU 1500, 1 KiB, 32
	// MiB, against perf_test's server, interleaved, means of 6): 58.7
	// locked, 47.6 unlocked, perf_test 62.2. Unlocked, sysmon's preemption
	// every 10ms can hand the goroutine to a spinning thread (perf stat on
	// loopback: 101-252 CPU migrations a run, 27-114 locked, perf_test's
	// 0-4); locking inside kquic's Write only, around each sendmsg or the
	// whole call, did not recover it (51.2 and 41.0 in such runs).
	// (perf_test's server reads alike either way, so Serve does not lock.)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	var sent int64
	for sent < total {
		m := msg[:min(int64(msgLen), total-sent)]
		if _, err := s.Write(m); err != nil {
			return Result{}, fmt.Errorf("perftest: write after %d bytes: %w", sent, err)
		}
		sent += int64(len(m))
	}
	if err := s.Close(); err != nil {
		return Result{}, fmt.Errorf("perftest: send FIN: %w", err)
	}
	answer, err := io.ReadAll(io.LimitReader(s, 1024))
	if err != nil {
		return Result{}, fmt.Errorf("perftest: read the server's answer: %w", err)
	}
	elapsed := time.Since(start)
	if string(answer) != Answer {
		return Result{}, fmt.Errorf("perftest: the server answered %q, want %q (is it perf_test or kqbench perf in throughput mode?)", answer, Answer)
	}
	return Result{MsgLen: msgLen, Bytes: sent, Elapsed: elapsed}, nil
}

// ConnResult is a run of sequential connections.
type ConnResult struct {
	Conns   int           // connections made, each with a full handshake
	Bytes   int64         // bytes sent on each
	Elapsed time.Duration // from the first dial to the last close
}

// PerSecond is the rate of connections.
func (r ConnResult) PerSecond() float64 { return float64(r.Conns) / r.Elapsed.Seconds() }

func (r ConnResult) String() string {
	return fmt.Sprintf("%d connections (handshake, %d bytes, answer, close) in %v: %.1f connections/s",
		r.Conns, r.Bytes, r.Elapsed.Round(time.Millisecond), r.PerSecond())
}

// RunConnections dials addr n times in a row, each time doing Run with
// msgLen and total and closing the connection, and measures the rate: the
// handshake rate against a perf_test server, which serves one connection
// after another. cfg should have no session cache, so that every handshake
// is a full one.
func RunConnections(ctx context.Context, addr string, cfg *kquic.Config, n, msgLen int, total int64) (ConnResult, error) {
	if n <= 0 {
		return ConnResult{}, fmt.Errorf("perftest: %d connections: give a positive count", n)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		c, err := kquic.Dial(ctx, "udp", addr, cfg)
		if err != nil {
			return ConnResult{}, fmt.Errorf("perftest: connection %d of %d: %w", i+1, n, err)
		}
		_, err = Run(ctx, c, msgLen, total)
		c.Close()
		if err != nil {
			return ConnResult{}, fmt.Errorf("perftest: connection %d of %d: %w", i+1, n, err)
		}
	}
	return ConnResult{Conns: n, Bytes: total, Elapsed: time.Since(start)}, nil
}

// Serve is perf_test's server in throughput mode: for each connection
// accepted on ln it reads the first stream to its FIN, answers, and waits for
// the client to close. Unlike perf_test it serves connections concurrently,
// so that a client slow to close does not hold up the next one. It reports
// the bytes each client sent to report (if not nil; one call at a time) and
// returns, once the connections in progress are done, when ctx ends or ln is
// closed.
func Serve(ctx context.Context, ln *kquic.Listener, report func(received int64, err error)) error {
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
			n, err := serveConn(ctx, c, make([]byte, 16*MaxMsgLen)) // perf_test reads up to 16 messages at a time
			if report != nil {
				mu.Lock()
				report(n, err)
				mu.Unlock()
			}
		}()
	}
}

func serveConn(ctx context.Context, c *kquic.Conn, buf []byte) (int64, error) {
	defer c.Close()
	s, err := c.AcceptStream(ctx)
	if err != nil {
		return 0, fmt.Errorf("perftest: accept the client's stream: %w", err)
	}
	var n int64
	for {
		m, err := s.Read(buf)
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("perftest: read after %d bytes: %w", n, err)
		}
	}
	if _, err := s.Write([]byte(Answer)); err != nil {
		return n, fmt.Errorf("perftest: answer: %w", err)
	}
	if err := s.Close(); err != nil {
		// perf_test's client closes the connection as soon as it has read
		// the answer, which can be before our FIN goes out: a clean close
		// by the peer then is success, not a failed transfer.
		var ce *kquic.CloseError
		if errors.As(err, &ce) && ce.Remote && ce.ErrorCode == 0 && ce.TransportErrorCode == 0 {
			return n, nil
		}
		return n, fmt.Errorf("perftest: answer's FIN: %w", err)
	}
	// The client closes once it has the answer.
	select {
	case <-c.Done():
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	return n, nil
}

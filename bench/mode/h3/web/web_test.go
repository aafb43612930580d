//go:build linux

package web

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/racedetect"
)

// TestWorkloads runs every workload over every transport that runs here,
// real servers and clients over loopback, every body checked.
func TestWorkloads(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			_, c := tr.start(t, Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, size := range []int64{0, 1, 3<<20 + 7} {
				r, err := Download(ctx, c, size)
				if err != nil {
					t.Fatalf("download %d: %v", size, err)
				}
				if r.Bytes != size || r.Requests != 1 || r.Seconds <= 0 || r.Errors.Count != 0 {
					t.Errorf("download %d: %+v", size, r)
				}
				r, err = Upload(ctx, c, size)
				if err != nil {
					t.Fatalf("upload %d: %v", size, err)
				}
				if r.Bytes != size || r.Seconds <= 0 || r.Errors.Count != 0 {
					t.Errorf("upload %d: %+v", size, r)
				}
			}
			r, err := Objects(ctx, c, ObjectsOptions{Conns: 2, Streams: 4, Size: 1000, Warmup: 50 * time.Millisecond, Duration: time.Second})
			if err != nil {
				t.Fatalf("objects: %v", err)
			}
			if r.Errors.Count != 0 || r.Requests < 1 || r.Latency.Count != r.Requests || r.Bytes != 1000*r.Requests {
				t.Errorf("objects: %d requests, %d latencies, errors %s", r.Requests, r.Latency.Count, r.Errors)
			}
			t.Logf("objects: %.0f requests/s, p50 %v p99 %v", r.RequestsPerSecond(), r.Latency.P50, r.Latency.P99)
			for _, cold := range []bool{false, true} {
				r, err := Page(ctx, c, PageOptions{Resources: 30, Size: 5000, Cold: cold})
				if err != nil {
					t.Fatalf("page (cold %v): %v", cold, err)
				}
				if r.Requests != 31 || r.Errors.Count != 0 || r.Bytes <= 30*5000 {
					t.Errorf("page (cold %v): %+v", cold, r)
				}
			}
			testSetup(ctx, t, c)
		})
	}
}

func testSetup(ctx context.Context, t *testing.T, c *Client) {
	const rounds = 3
	for _, kind := range []SetupKind{SetupFull, SetupResumed, Setup0RTT} {
		if kind != SetupFull && racedetect.Enabled && strings.Contains(c.Name, "quic-go") {
			// quic-go's client dialing early (with a session ticket: the
			// resumed and the 0-RTT setups) races within quic-go
			// (quic-go/quic-go#4303, open): the race detector fails the
			// test on it, whatever this package does.
			t.Logf("setup %s: not run with the race detector on (quic-go/quic-go#4303)", kind)
			continue
		}
		r, err := Setup(ctx, c, kind, rounds)
		unsupported := (kind != SetupFull && c.NoResumption != "") || (kind == Setup0RTT && c.EarlyMethod == "")
		if unsupported {
			if !errors.Is(err, ErrNotSupported) {
				t.Errorf("setup %s: %v, want ErrNotSupported (%s%s)", kind, err, c.NoResumption, c.NoEarlyData)
			}
			continue
		}
		if err != nil {
			t.Fatalf("setup %s: %v", kind, err)
		}
		if r.Requests != rounds || r.Errors.Count != 0 {
			t.Fatalf("setup %s: %d of %d rounds, errors %s", kind, r.Requests, rounds, r.Errors)
		}
		wantResumed := map[SetupKind]int64{SetupFull: 0, SetupResumed: rounds, Setup0RTT: rounds}[kind]
		wantEarly := map[SetupKind]int64{Setup0RTT: rounds}[kind]
		if r.Resumed != wantResumed || r.Early != wantEarly {
			t.Errorf("setup %s: %d resumed, %d in 0-RTT; want %d, %d", kind, r.Resumed, r.Early, wantResumed, wantEarly)
		}
		t.Logf("setup %s: time to first byte p50 %v", kind, r.Latency.P50)
	}
}

// TestUDPRcvBufReported asks for a 64 KiB UDP receive buffer and finds what
// Linux grants (twice the ask, for its bookkeeping) in both ends' settings.
func TestUDPRcvBufReported(t *testing.T) {
	const ask = 64 << 10
	_, c := startQuicGo(t, Config{UDPRcvBuf: ask})
	if c.Server.UDPRcvBufAsked != ask || c.Server.UDPRcvBufGranted != 2*ask {
		t.Errorf("server: asked %d, granted %d; want %d, %d", c.Server.UDPRcvBufAsked, c.Server.UDPRcvBufGranted, ask, 2*ask)
	}
	r, err := Download(context.Background(), c, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.ClientSettings; s.UDPRcvBufAsked != ask || s.UDPRcvBufGranted != 2*ask {
		t.Errorf("client: asked %d, granted %d; want %d, %d", s.UDPRcvBufAsked, s.UDPRcvBufGranted, ask, 2*ask)
	}
	_, c = startQuicGo(t, Config{})
	if c.Server.UDPRcvBufAsked != quicGoRcvBuf || c.Server.UDPRcvBufGranted <= 0 {
		t.Errorf("quic-go's own ask: asked %d, granted %d", c.Server.UDPRcvBufAsked, c.Server.UDPRcvBufGranted)
	}
}

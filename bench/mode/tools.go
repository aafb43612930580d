//go:build linux

package mode

import "sync"

// Tools says where the external programs of the drivers are (the native
// driver's C tools), and keeps what their runs taught: each cell's last
// rate, from which the next run of a tool that sends a fixed total is
// sized.
type Tools struct {
	// PerfTest is the module's built tests/perf_test, or a wrapper that
	// runs it ("": the driver's default, $KQUIC_PERF_TEST).
	PerfTest string
	// IperfQUIC is the module author's iperf3 fork (lxin/iperf, built
	// against libquic, run with --quic), which measures kernel QUIC at
	// every size where perf_test stops at 4 KiB ("": $KQUIC_IPERF, else
	// perf_test measures kquic).
	IperfQUIC string
	// Iperf3 and OpenSSL are the programs ("": found on PATH).
	Iperf3, OpenSSL string

	mu    sync.Mutex
	rates map[string]float64
}

// Rate is the bytes per second of cell key's last run, or 0.
func (t *Tools) Rate(key string) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rates[key]
}

// SetRate records cell key's last run's bytes per second.
func (t *Tools) SetRate(key string, bytesPerSec float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rates == nil {
		t.rates = map[string]float64{}
	}
	t.rates[key] = bytesPerSec
}

// Package native is kqbench's native driver (--driver native): the same
// cells as bulk mode measured by C tools between the same two namespaces,
// with the same probes and CPU accounting, so that a cell's Go figure has
// the kernel's own beside it: for kquic the module author's iperf3 fork
// (lxin/iperf, --quic) where it is given, at every size and encrypted or
// not, as the module's README measured, else the module's tests/perf_test
// (up to 4 KiB messages); iperf3 for tcp; openssl -ktls for ktls where the
// openssl has kTLS; Debian's gtlsclient and gtlsserver for ngtcp2 (a C QUIC
// stack only this driver measures). Its spec, flags and preset build on every platform;
// its measuring on Linux.
package native

import (
	"sync"

	"kquic.dev/bench/matrix"
)

// Name is the driver's name (--driver native).
const Name = matrix.Driver("native")

// The native driver's tools, as results.Sample.Tool names them.
const (
	ToolPerfTest  = "perf_test"                      // the module's tests/perf_test (kquic, up to 4 KiB)
	ToolIperf3    = "iperf3"                         // iperf3 (tcp)
	ToolIperfQUIC = "iperf3 --quic (lxin/iperf)"     // the module author's iperf3 fork (kquic, every size)
	ToolNgtcp2    = "gtlsclient/gtlsserver (ngtcp2)" // Debian's ngtcp2 programs (the ngtcp2 column)
)

// The environment variables that name the module's tools when the run's
// Tools does not.
const (
	// PerfTestEnv names the module's built tests/perf_test.
	PerfTestEnv = "KQUIC_PERF_TEST"
	// IperfQUICEnv names the module author's iperf3 fork with --quic
	// (lxin/iperf), which measures kernel QUIC at every size.
	IperfQUICEnv = "KQUIC_IPERF"
)

func init() {
	err := matrix.RegisterDriver(Name, matrix.DriverSpec{
		About: "the C tools: the module's perf_test for kquic, iperf3 for tcp, openssl -ktls for ktls, Debian's gtlsclient/gtlsserver for ngtcp2",
		Help: `--driver native measures the kernel's figure with C tools instead, on the same
veth pair with the same counters: the module's perf_test for kquic (--perf-test
or $KQUIC_PERF_TEST), iperf3 for tcp, openssl -ktls for ktls where it has it;
--driver go,native sets the columns side by side (kquic | kquic(C)); with
--iperf-quic (or $KQUIC_IPERF) kquic(C) is the module author's iperf3 fork, the
tool of the module's README, at every size. --transports ngtcp2 adds Debian's
ngtcp2 (gtlsserver generates the body, gtlsclient downloads it, or POSTs it up):
the ngtcp2(C) column, beside quic-go.`,
		Column:      "(C)",
		Modes:       []matrix.Mode{"bulk"},
		ReadMessage: true,
		Kernel:      true,
		Hint:        "--driver go,native with --iperf-quic (or --perf-test)",
		Flags: []matrix.Flag{
			{Name: "perf-test", Usage: "the module's built tests/perf_test (or a wrapper running it) for --driver native (default $" + PerfTestEnv + ")"},
			{Name: "iperf-quic", Usage: "the module author's iperf3 fork (lxin/iperf built against libquic) for --driver native: measures kquic at every size with --quic, encrypted or not, as the module's README did (default $" + IperfQUICEnv + "; without it perf_test, up to 4 KiB)"},
			{Name: "iperf3", Usage: "the iperf3 program for --driver native (default: iperf3 on PATH)"},
		},
		Options: func(f matrix.Flags) (any, error) {
			return &Tools{PerfTest: f.Value("perf-test"), IperfQUIC: f.Value("iperf-quic"), Iperf3: f.Value("iperf3")}, nil
		},
		Unencrypted: unencrypted,
	})
	if err != nil {
		panic(err)
	}
	matrix.RegisterPreset(LxinReadme)
}

// unencrypted says how a transport's native cells go unencrypted: the
// tool's switch.
func unencrypted(transport, tool string) string {
	switch transport {
	case "kquic":
		if tool == ToolIperfQUIC {
			return ToolIperfQUIC + " --no-cryption"
		}
		return "perf_test -x"
	case "tcp":
		return "iperf3"
	}
	return ""
}

// LxinReadme is the kernel QUIC module's README tables (lxin/quic,
// "performance tests with iperf"): QUIC | kTLS and QUIC without 1-RTT
// encryption | TCP, 1 to 64 KiB, MTU 1500 and 9000, with TCP's and kTLS's
// GSO off again; the kernel's figure (the native driver: the module
// author's iperf3 fork, else perf_test) beside the Go bindings'. The
// ratios the README's readers compute follow the tables
// (render.WriteRatios).
var LxinReadme = matrix.Preset{
	Name:  "lxin-readme",
	About: "the kernel QUIC module README's tables: kquic, ktls, tcp; 1-64 KiB; MTU 1500, 9000; GSO and encryption on and off; --driver go,native, with --iperf-quic for the kernel's kquic figure at every size; the README's ratios follow the tables",
	Help: `--preset lxin-readme runs the module README's two tables (QUIC | kTLS, QUIC
without encryption | TCP, 1-64 KiB, MTU 1500 and 9000, GSO on and off) with
both drivers; after the tables come the ratios the README's readers compute
(kquic / ktls, kquic / tcp, GSO off / on), each with its 95% interval and the
README's own ratio beside it.`,
	Transports: []string{"kquic", "ktls", "tcp"},
	Sizes:      []int{1 << 10, 4 << 10, 16 << 10, 64 << 10},
	MTUs:       []int{1500, 9000},
	GSO:        []bool{true, false},
	Crypto:     []bool{true, false},
	Directions: []matrix.Direction{matrix.Up},
	Drivers:    []matrix.Driver{matrix.DriverGo, Name},
	Mode:       "bulk",
}

// Tools says where the native driver's programs are, and keeps what their
// runs taught: each cell's last rate, from which the next run of a tool
// that sends a fixed total is sized. A run's is made of its flags
// (matrix.DriverSpec.Options).
type Tools struct {
	// PerfTest is the module's built tests/perf_test, or a wrapper that
	// runs it ("": $KQUIC_PERF_TEST).
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

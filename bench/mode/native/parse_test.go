//go:build linux

package native_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"kquic.dev/bench/mode/native"
	"kquic.dev/internal/testenv"
)

// The fixtures are the tools' real output: perf_test's client sending 4 MiB
// of 4 KiB messages over loopback in the guest, iperf3 3.12's --json of a
// 1 s test after a 1 s -O warm-up, and of a refused connection.
func TestParsePerfTest(t *testing.T) {
	out, err := os.ReadFile("testdata/native/perf_test.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, err := native.ParsePerfTest(out)
	if err != nil {
		t.Fatal(err)
	}
	// Its loop sends one message past -t 4194304: 4198400 bytes in 638 ms.
	if f.Bytes != 4198400 || f.Seconds != 0.638 {
		t.Errorf("got %d bytes in %g s, want 4198400 in 0.638", f.Bytes, f.Seconds)
	}
	// A client that failed before its results says so with its last line.
	failed := []byte("Running in THROUGHPUT mode\nsend -1 111\n")
	if _, err := native.ParsePerfTest(failed); err == nil || !strings.Contains(err.Error(), "send -1 111") {
		t.Errorf("a failed run: %v, want an error quoting its last line", err)
	}
	if _, err := native.ParsePerfTest([]byte("Total sent:       4096 bytes\nTotal time:       0 ms (0.000 sec)\n")); err == nil {
		t.Error("a run of 0 ms gave no error")
	}
}

func TestParseIperf3(t *testing.T) {
	out, err := os.ReadFile("testdata/native/iperf3.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := native.ParseIperf3(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Bytes != 645750784 || f.Seconds != 1.003534 {
		t.Errorf("got %d bytes in %g s, want end.sum_received's 645750784 in 1.003534", f.Bytes, f.Seconds)
	}
	if len(f.Streams) != 1 || f.Streams[0] != f.Bytes {
		t.Errorf("streams %v, want the one stream's receiver bytes, %d", f.Streams, f.Bytes)
	}
	out, err = os.ReadFile("testdata/native/iperf3-refused.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := native.ParseIperf3(out); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("a refused connection: %v, want iperf3's error", err)
	}
	if _, err := native.ParseIperf3([]byte("iperf3: error - unable to connect")); err == nil {
		t.Error("output that is not JSON gave no error")
	}
}

func TestOpenSSLHasKTLS(t *testing.T) {
	// OpenSSL 3's s_server -help with enable-ktls lists the option so.
	with := []byte("General options:\n -help                      Display this summary\n -ktls                      Enable Kernel TLS for sending and receiving\n")
	if !native.OpenSSLHasKTLS(with) {
		t.Error("missed -ktls in a help text that lists it")
	}
	if native.OpenSSLHasKTLS([]byte(" -sendfile                  Use sendfile to response file with -WWW (needs -ktls)\n")) {
		t.Error("took a mention of -ktls in another option's text for the option")
	}
	// The installed openssl: it has -ktls exactly when its help lists it.
	p := testenv.Tool(t, "openssl", "openssl")
	help, _ := exec.Command(p, "s_server", "-help").CombinedOutput()
	if got, want := native.OpenSSLHasKTLS(help), strings.Contains(string(help), "\n -ktls "); got != want {
		t.Errorf("installed openssl: OpenSSLHasKTLS = %v, its help lists -ktls: %v", got, want)
	}
}

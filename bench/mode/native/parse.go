//go:build linux

package native

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ToolFigure is what a native tool reports for one run: the payload bytes
// it counted and the seconds they took, by the tool's own clock.
type ToolFigure struct {
	Bytes   int64
	Seconds float64
	// Streams are each stream's (each -P connection's) receiver bytes,
	// in the tool's order, where it reports them (iperf3).
	Streams []int64
}

var (
	perfTestSentRE = regexp.MustCompile(`(?m)^Total sent:\s+([0-9]+) bytes`)
	perfTestTimeRE = regexp.MustCompile(`(?m)^Total time:\s+([0-9]+) ms`)
)

// ParsePerfTest reads the result of the module's perf_test client
// (throughput mode): "Total sent: N bytes" and "Total time: N ms", the time
// from its first sendmsg to the server's reply to the stream's FIN, that
// is, until the server has read every byte.
func ParsePerfTest(out []byte) (ToolFigure, error) {
	sent := perfTestSentRE.FindSubmatch(out)
	ms := perfTestTimeRE.FindSubmatch(out)
	if sent == nil || ms == nil {
		return ToolFigure{}, fmt.Errorf("perf_test: no \"Total sent\"/\"Total time\" lines in its output (last line: %q)", lastLine(out))
	}
	b, err := strconv.ParseInt(string(sent[1]), 10, 64)
	if err != nil {
		return ToolFigure{}, fmt.Errorf("perf_test: total sent: %w", err)
	}
	t, err := strconv.ParseInt(string(ms[1]), 10, 64)
	if err != nil {
		return ToolFigure{}, fmt.Errorf("perf_test: total time: %w", err)
	}
	if t <= 0 {
		return ToolFigure{}, fmt.Errorf("perf_test: %d bytes in %d ms: too short to time (the total is too small)", b, t)
	}
	return ToolFigure{Bytes: b, Seconds: float64(t) / 1000}, nil
}

// ParseIperf3 reads iperf3's --json result: the receiver's bytes and
// seconds after the omitted (-O) warm-up, end.sum_received (the server's
// count for a normal test, the client's for -R), and each stream's
// receiver bytes (end.streams[].receiver), which add up to them.
func ParseIperf3(out []byte) (ToolFigure, error) {
	var res struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				Bytes   int64   `json:"bytes"`
				Seconds float64 `json:"seconds"`
			} `json:"sum_received"`
			Streams []struct {
				Receiver struct {
					Bytes int64 `json:"bytes"`
				} `json:"receiver"`
			} `json:"streams"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return ToolFigure{}, fmt.Errorf("iperf3: its --json output: %w (last line: %q)", err, lastLine(out))
	}
	if res.Error != "" {
		return ToolFigure{}, fmt.Errorf("iperf3: %s", res.Error)
	}
	s := res.End.SumReceived
	if s.Bytes <= 0 || s.Seconds <= 0 {
		return ToolFigure{}, fmt.Errorf("iperf3: the receiver counted %d bytes in %g s", s.Bytes, s.Seconds)
	}
	f := ToolFigure{Bytes: s.Bytes, Seconds: s.Seconds}
	for _, st := range res.End.Streams {
		f.Streams = append(f.Streams, st.Receiver.Bytes)
	}
	return f, nil
}

// OpenSSLHasKTLS reports whether `openssl s_server -help` output lists the
// -ktls option (OpenSSL 3 built with enable-ktls; Debian's is not).
func OpenSSLHasKTLS(help []byte) bool {
	for _, l := range strings.Split(string(help), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "-ktls" {
			return true
		}
	}
	return false
}

// lastLine is the last line of a tool's output, where its result or error
// stands.
func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndex(s, "\n")+1:]
}

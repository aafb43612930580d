package h3

import (
	"bytes"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// webCell is a measured h3-mode download cell of goodput bps at rtt
// seconds, the client granting window per stream.
func webCell(t *testing.T, transport string, bps, rtt float64, window int64, drops int64) results.CellResult {
	t.Helper()
	c := matrix.Cell{Transport: transport, Mode: Name, Workload: WorkloadDownload, Size: 1 << 20, MTU: 1500, GSO: true, Crypto: true, Streams: 1, Direction: matrix.Down}
	r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
	secs := float64(1<<20) * 8 / bps
	for range 3 {
		r.Samples = append(r.Samples, results.Sample{Bytes: 1 << 20, Seconds: secs, Bps: bps, Payload: &Sample{
			Workload: WorkloadDownload, Requests: 1, Bytes: 1 << 20, Seconds: secs, RTTSeconds: rtt, ServerRcvbufErrors: drops, RmemMax: 212992,
			Client: WebSettings{Protocol: "h3", Stack: "quic-go", StreamWindow: window, ConnWindow: 15 << 20, UDPRcvBufAsked: 4096, UDPRcvBufGranted: 8192},
			Server: WebSettings{Protocol: "h3", Stack: "quic-go", StreamWindow: window, ConnWindow: 15 << 20, UDPRcvBufAsked: 4096, UDPRcvBufGranted: 8192},
		}})
	}
	r.Summarize()
	return r
}

func brakeKinds(bs []WebBrake) string {
	var k []string
	for _, b := range bs {
		k = append(k, b.Kind)
	}
	return strings.Join(k, ",")
}

// TestWebBrakes: a download at the window over the round trip is
// window-limited, one far below it is not; receive-buffer drops are named
// with the buffer and net.core.rmem_max.
func TestWebBrakes(t *testing.T) {
	// 64 KiB per 100 ms is 5.24 Mbit/s.
	if got := brakeKinds(WebBrakes(webCell(t, QuicGo, 4.8e6, 0.1, 64<<10, 0))); got != "window" {
		t.Errorf("4.8 Mbit/s under a 64 KiB window at 100 ms: brakes %q, want window", got)
	}
	if got := brakeKinds(WebBrakes(webCell(t, QuicGo, 30e6, 0.1, 6<<20, 0))); got != "" {
		t.Errorf("30 Mbit/s under a 6 MiB window at 100 ms: brakes %q, want none", got)
	}
	if got := brakeKinds(WebBrakes(webCell(t, QuicGo, 30e6, 0, 64<<10, 0))); got != "" {
		t.Errorf("no delay: brakes %q, want none (no round trip to divide by)", got)
	}
	bs := WebBrakes(webCell(t, QuicGo, 30e6, 0, 6<<20, 284))
	if brakeKinds(bs) != "rcvbuf" || !strings.Contains(bs[0].Text, "852 datagrams") || !strings.Contains(bs[0].Text, "net.core.rmem_max (now 212992)") || !strings.Contains(bs[0].Text, "got 8192 bytes (asked 4096)") {
		t.Errorf("drops: %+v", bs)
	}
}

// TestWebTables prints a table per workload with a row per transport, and
// the explanation with the settings in force and the brakes.
func TestWebTables(t *testing.T) {
	d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Mode: Name, Transports: []string{QuicGo, H2CryptoTLS}, Repeat: 3, Netem: "delay=100ms"}}
	d.Cells = []results.CellResult{webCell(t, QuicGo, 4.8e6, 0.1, 64<<10, 0), webCell(t, H2CryptoTLS, 30e6, 0.1, 4<<20, 0)}
	var out bytes.Buffer
	if err := render.WriteTables(&out, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"download 1 MiB, MTU 1500", "h3-quic-go     4.8", "h2-tls    30.0", "64 KiB", "quic-go's own http3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := render.WriteExplain(&out, d); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "BRAKE window-limited") || !strings.Contains(s, "client h3/quic-go: stream window 64 KiB") || strings.Count(s, "BRAKE") != 1 {
		t.Errorf("explanation:\n%s", s)
	}
	out.Reset()
	if err := render.WriteCSV(&out, d); err != nil || !strings.Contains(out.String(), ",window,") {
		t.Errorf("CSV (%v):\n%s", err, out.String())
	}
}

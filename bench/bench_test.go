//go:build linux

package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func shortSpec(transports ...string) matrix.Spec {
	return matrix.Spec{
		Transports: transports,
		Sizes:      []int{1 << 10, 64 << 10},
		MTUs:       []int{1500},
		GSO:        []bool{true, false},
		Crypto:     []bool{true, false},
		Directions: []matrix.Direction{matrix.Up},
		Streams:    1,
		Time:       300 * time.Millisecond,
		Warmup:     100 * time.Millisecond,
		Repeat:     2,
	}
}

func TestSpecValidation(t *testing.T) {
	s := shortSpec("tcp")
	s.Transports = append(s.Transports, "carrier-pigeon")
	s.Sizes = []int{0, 17 << 20}
	s.MTUs = []int{500}
	s.Directions = []matrix.Direction{"sideways"}
	s.Repeat = 0
	s.MaxRepeat = -1
	err := s.Validate()
	for _, want := range []string{"carrier-pigeon", "size 0", "size 17825792", "MTU 500", "sideways", "repeat 0", "max-repeat -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; want it to name %q", err, want)
		}
	}
	good := shortSpec("tcp", "quic-go")
	if err := good.Validate(); err != nil {
		t.Errorf("valid spec rejected: %v", err)
	}
	if n := len(good.Cells()); n != 2*2*2*2 {
		t.Errorf("%d cells, want 16", n)
	}
}

// TestMatrixOverVeth runs the engine for real: tcp and quic-go over a veth
// pair between two namespaces, with GSO on and off.
func TestMatrixOverVeth(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	out := filepath.Join(t.TempDir(), "m.json")
	var log strings.Builder
	lastDone, lastTotal := 0, 0
	spec := shortSpec("tcp", "quic-go")
	spec.MaxRepeat = 6 // a cell still wide after 2 samples gets more
	if runtime.NumCPU() >= 2 {
		spec.Affinity = &matrix.Affinity{Client: 0, Server: 1}
	}
	r := &bench.Runner{Spec: spec, Out: out, Log: &log,
		Progress: func(done, total int, _ matrix.Cell) { lastDone, lastTotal = done, total }}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Complete {
		t.Error("document not marked complete")
	}
	if n := doc.Env.NIC; n == nil || n.Device != "kqb0" || n.Driver != "veth" || n.Rings != "not reported by the driver" || n.Channels == "" {
		t.Errorf("the run's NIC record: %+v", n)
	}
	// Cells that cannot run (tcp with encryption, quic-go without) are in
	// the document but not in the progress, its count or the log. The
	// progress counts sample windows: kept, set aside for steal (and taken
	// again), and for a failed cell at least Repeat (those it did not take
	// are counted done when its configuration ends).
	windows := 0
	for _, c := range doc.Cells {
		switch c.Status {
		case results.StatusOK:
			windows += len(c.Samples) + len(c.Disturbed)
		case results.StatusFailed:
			windows += max(spec.Repeat, len(c.Samples)+len(c.Disturbed)+1)
		case results.StatusUnavailable:
			windows += spec.Repeat
		}
		if c.Status == results.StatusOK {
			checkRepeats(t, c, spec)
		}
		if strings.HasPrefix(c.Note, "n/a") {
			t.Errorf("%s: note %q repeats the status", c.Key, c.Note)
		}
	}
	if lastDone != windows || lastTotal != windows {
		t.Errorf("progress ended at %d of %d, want %d of %d (the sample windows taken)", lastDone, lastTotal, windows, windows)
	}
	if strings.Contains(log.String(), "n/a") {
		t.Errorf("the log lists cells that cannot run:\n%s", log.String())
	}
	if n := roundRobin(t, doc, r.Spec.Repeat); n != 2 {
		t.Errorf("%d device configurations with both transports measured, want 2 (GSO on and off)", n)
	}

	ok := 0
	for _, c := range doc.Cells {
		switch {
		case c.Transport == "tcp" && c.Crypto, c.Transport == "quic-go" && !c.Crypto:
			if c.Status != results.StatusNA {
				t.Errorf("%s: status %s, want n/a", c.Key, c.Status)
			}
		default:
			if c.Status != results.StatusOK {
				t.Errorf("%s: %s %s", c.Key, c.Status, c.Error)
				continue
			}
			ok++
			if len(c.Samples) < 2 || c.MedianBps <= 0 || c.Samples[0].Bytes <= 0 {
				t.Errorf("%s: samples %+v", c.Key, c.Samples)
			}
			// The pinned ends' CPUs are accounted: each was busy.
			for _, smp := range c.Samples {
				if spec.Affinity == nil {
					break
				}
				if e := smp.Ends; e == nil || e.Server == nil || e.Client.CPU != 0 || e.Server.CPU != 1 ||
					e.Client.Busy <= 0 || e.Server.Busy <= 0 || e.Client.Busy > 1 || e.Server.Busy > 1 {
					t.Errorf("%s: the pinned ends' CPU: %+v", c.Key, e)
				}
			}
			if !c.GSO && !strings.Contains(c.Offloads, fmt.Sprintf("gso_max_size=%d", c.MTU)) {
				t.Errorf("%s: GSO off without packets limited to the MTU: %q", c.Key, c.Offloads)
			}
		}
	}
	if ok != 8 {
		t.Errorf("%d cells measured, want 8", ok)
	}
	// What was written is what was returned.
	back, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(doc)
	b, _ := json.Marshal(back)
	if !bytes.Equal(a, b) {
		t.Error("the saved document differs from the returned one")
	}
	// Measured results are never overwritten without --resume.
	if _, err := (&bench.Runner{Spec: shortSpec("tcp"), Out: out}).Run(context.Background()); !errors.Is(err, bench.ErrExists) {
		t.Errorf("second run over the same file = %v, want ErrExists", err)
	}
}

func TestResumeAfterInterrupt(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	out := filepath.Join(t.TempDir(), "m.json")
	spec := shortSpec("tcp")
	spec.Crypto = []bool{false}
	ctx, cancel := context.WithCancel(context.Background())
	r := &bench.Runner{Spec: spec, Out: out, Progress: func(done, total int, c matrix.Cell) {
		if done >= 2*spec.Repeat { // the first device configuration's two cells are complete: interrupt
			cancel()
		}
	}}
	doc, err := r.Run(ctx)
	if !errors.Is(err, context.Canceled) || doc == nil {
		t.Fatalf("interrupted run = %v", err)
	}
	saved, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Complete || len(saved.Cells) == 0 || len(saved.Cells) >= len(spec.Cells()) {
		t.Fatalf("after the interrupt the file has %d of %d cells (complete=%v)", len(saved.Cells), len(spec.Cells()), saved.Complete)
	}
	first := saved.Cells[0]
	doc, err = (&bench.Runner{Spec: spec, Out: out, Resume: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Complete || len(doc.Cells) != len(spec.Cells()) {
		t.Fatalf("resumed run: complete=%v, %d cells", doc.Complete, len(doc.Cells))
	}
	if got, _ := doc.Lookup(first.Cell); got.Samples[0].Finished != first.Samples[0].Finished {
		t.Error("resuming measured the finished cell again")
	}
}

// TestExplainAndCapture runs cells with the counters and the capture
// attached, and checks the figures against what the workload must cause.
func TestExplainAndCapture(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureBTF)
	dir := t.TempDir()
	spec := shortSpec("tcp")
	spec.Crypto, spec.GSO, spec.Repeat = []bool{false}, []bool{true}, 1
	r := &bench.Runner{Spec: spec, Explain: true, CaptureDir: filepath.Join(dir, "cap")}
	os.MkdirAll(r.CaptureDir, 0o755)
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cells {
		if c.Status != results.StatusOK {
			t.Fatalf("%s: %s %s", c.Key, c.Status, c.Error)
		}
		s := c.Samples[0]
		mb := float64(s.Bytes) / 1e6
		sys := (s.Counters["client.syscalls"] + s.Counters["server.syscalls"] + s.Counters["process.syscalls"]) / mb
		// Every message is at least one write. The bytes are the receiver's
		// in the window, which can exceed what the sender wrote in it by
		// what the socket buffers held at its start (a few MB against
		// ~10 MB in 300 ms under emulation), hence half.
		if min := 1e6 / float64(c.Size); sys < min/2 {
			t.Errorf("%s: %.0f syscalls per MB, fewer than half the %.0f writes per MB the sender made", c.Key, sys, min)
		}
		if s.Counters["client.tx_packets"] <= 0 {
			t.Errorf("%s: no transmit packets counted: %v", c.Key, s.Counters)
		}
		// The capture and the counters cover the same window (Begin, End
		// at the same instants, by the kernel's clocks): the capture sees
		// the frames the client's device sent (GSO super-packets whole, as
		// net_dev_xmit counts them), or says it fell behind. The two take
		// their times at different points of a transmission, which under
		// emulation can be milliseconds apart: hence 5%.
		behind := s.Counters["wire.kernel_drops"] > 0 || s.Counters["wire.unread"] > 0
		// A probe that set the window after its instant says so.
		late := slices.ContainsFunc(s.CountersMissing, func(m string) bool { return strings.Contains(m, "the window was set") })
		wire, dev := s.Counters["wire.tx_packets"], s.Counters["client.tx_packets"]
		t.Logf("%s: %.0f syscalls/MB; capture %v frames (%v segments, %v outside the window), device %v packets; drops %v, unread %v", c.Key, sys, wire, s.Counters["wire.tx_segments"], s.Counters["wire.outside_window"], dev, s.Counters["wire.kernel_drops"], s.Counters["wire.unread"])
		if late {
			t.Logf("%s: %v", c.Key, s.CountersMissing)
		}
		if !behind && !late && (wire <= 0 || wire < dev*0.95-2 || wire > dev*1.05+2) {
			t.Errorf("%s: capture saw %v frames in the window, the device sent %v packets, and it does not say it fell behind", c.Key, wire, dev)
		}
		if s.Counters["wire.tx_segments"] < wire {
			t.Errorf("%s: %v segments in %v frames", c.Key, s.Counters["wire.tx_segments"], wire)
		}
		if behind && !slices.ContainsFunc(s.CountersMissing, func(m string) bool { return strings.Contains(m, "could not keep up") }) {
			t.Errorf("%s: the capture fell behind but the sample does not say so: %v", c.Key, s.CountersMissing)
		}
	}
	var out bytes.Buffer
	render.WriteExplain(&out, doc)
	if !strings.Contains(out.String(), "I/O syscalls/MB") || !strings.Contains(out.String(), "drops/MB") || strings.Contains(out.String(), "run the matrix with --explain") {
		t.Errorf("explain table:\n%s", out.String())
	}
	// The data's system calls are a part of the process's, and a TCP
	// transfer has some.
	for _, c := range doc.Cells {
		for _, s := range c.Samples {
			var io, all float64
			for k, n := range s.Counters {
				switch {
				case strings.HasSuffix(k, ".syscalls"):
					all += n
				case strings.HasSuffix(k, ".syscall.sendmsg"), strings.HasSuffix(k, ".syscall.recvmsg"),
					strings.HasSuffix(k, ".syscall.write"), strings.HasSuffix(k, ".syscall.read"),
					strings.HasSuffix(k, ".syscall.sendto"), strings.HasSuffix(k, ".syscall.recvfrom"):
					io += n
				}
			}
			if io <= 0 || io > all {
				t.Errorf("%s: %v data syscalls of %v", c.Key, io, all)
			}
		}
	}
	var csvOut bytes.Buffer
	render.WriteCSV(&csvOut, doc)
	if !strings.Contains(csvOut.String(), "per_mb.client.tx_packets") {
		t.Errorf("CSV lacks the counter columns: %.300s", csvOut.String())
	}
	// A capture per sample window: the kept samples and those set aside
	// because the hypervisor stole CPU during them (each retaken).
	windows := 0
	for _, c := range doc.Cells {
		windows += len(c.Samples) + len(c.Disturbed)
	}
	files, err := filepath.Glob(filepath.Join(r.CaptureDir, "*.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != windows {
		t.Errorf("%d captures for %d sample windows (%d cells)", len(files), windows, len(doc.Cells))
	}
}

// TestMatrixAllTransports runs every transport this kernel has: in the guest
// kernel TLS, TCP and quic-go, and kernel QUIC when its module is loaded.
func TestMatrixAllTransports(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureTLS)
	ts := []string{"ktls", "tcp", "quic-go"}
	if kmod.Probe(kmod.FeatureQUIC) == nil {
		ts = append([]string{"kquic"}, ts...)
	} else {
		t.Log("kernel QUIC module not loaded: kquic left out (set KQUIC_MODULE)")
	}
	spec := shortSpec(ts...)
	spec.Sizes, spec.GSO, spec.Repeat = []int{16 << 10}, []bool{true}, 2
	spec.Time, spec.Warmup = 500*time.Millisecond, 200*time.Millisecond
	doc, err := (&bench.Runner{Spec: spec}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// ktls and quic-go (and kquic) share the encrypted group: their
	// repeats must interleave.
	if n := roundRobin(t, doc, spec.Repeat); n == 0 {
		t.Error("no comparison group with two transports measured")
	}
	measured := map[string]bool{}
	for _, c := range doc.Cells {
		switch c.Status {
		case results.StatusOK:
			measured[c.Transport] = true
		case results.StatusFailed, results.StatusUnavailable:
			t.Errorf("%s: %s %s %s", c.Key, c.Status, c.Error, c.Note)
		}
	}
	for _, tr := range ts {
		if !measured[tr] {
			t.Errorf("%s: no cell measured", tr)
		}
	}
	var b bytes.Buffer
	render.WriteTables(&b, doc)
	t.Logf("\n%s", b.String())
}

// checkRepeats checks that a cell got more samples than spec.Repeat only
// while its spread was wide, and stopped short of spec.MaxRepeat only when
// it was narrow.
func checkRepeats(t *testing.T, c results.CellResult, spec matrix.Spec) {
	t.Helper()
	n := len(c.Samples)
	if n < spec.Repeat || n > max(spec.Repeat, spec.MaxRepeat) {
		t.Errorf("%s: %d samples; want %d to %d", c.Key, n, spec.Repeat, spec.MaxRepeat)
	}
	for k := spec.Repeat; k < n; k++ {
		prefix := results.CellResult{Cell: c.Cell, Samples: c.Samples[:k]}
		prefix.Summarize()
		if !prefix.WideSpread {
			t.Errorf("%s: a sample %d after a narrow spread (%.0f%% over %d samples)", c.Key, k+1, prefix.Spread*100, k)
		}
	}
	if n < spec.MaxRepeat && c.WideSpread {
		t.Errorf("%s: wide spread (%.0f%%) with %d samples, and no more taken (max %d)", c.Key, c.Spread*100, n, spec.MaxRepeat)
	}
	if n > spec.Repeat {
		t.Logf("%s: %d samples, spread %.0f%% (%.0f..%.0f Mbit/s of %.0f..%.0f)", c.Key, n, c.Spread*100,
			c.LowBps/1e6, c.HighBps/1e6, c.MinBps/1e6, c.MaxBps/1e6)
	}
}

// roundRobin checks that repeats ran round-robin across the cells of each
// device configuration (MTU and GSO) - sample i of every cell ended before
// sample i+1 of any - and returns how many groups had two transports or
// more.
func roundRobin(t *testing.T, doc *results.Document, repeat int) int {
	t.Helper()
	groups := map[string][]results.CellResult{}
	for _, c := range doc.Cells {
		if c.Status == results.StatusOK {
			k := fmt.Sprintf("mtu=%d/gso=%v", c.MTU, c.GSO)
			groups[k] = append(groups[k], c)
		}
	}
	n := 0
	for k, g := range groups {
		trs := map[string]bool{}
		for _, c := range g {
			trs[c.Transport] = true
		}
		if len(trs) >= 2 {
			n++
		}
		for i := 0; i+1 < repeat; i++ {
			for _, a := range g {
				for _, b := range g {
					if len(a.Samples) > i && len(b.Samples) > i+1 && !a.Samples[i].Finished.Before(b.Samples[i+1].Finished) {
						t.Errorf("%s: %s's sample %d ended after %s's sample %d: repeats ran back to back", k, a.Key, i+1, b.Key, i+2)
					}
				}
			}
		}
	}
	return n
}

// TestNoGSOMakesMSSPackets: with GSO off, the stack builds MSS-sized
// packets as a kernel without GSO does, by a limit on size (gso_max_size =
// MTU, tcp_min_tso_segs 1), not on segments per packet (gso_max_segs 1, an
// artefact that made TCP slower as writes grew: see SetGSO), and no packet
// over the MTU reaches the device even from 64 KiB writes. How the goodput
// moves with the write size is a measurement, not a promise:
// BenchmarkNoGSOWriteSizes gives it.
func TestNoGSOMakesMSSPackets(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureBTF)
	_, c := explainedTCPCell(t, 64<<10, 0, false)
	for _, want := range []string{"tso=false", "gso=false", "gso_max_size=1500", "tcp_min_tso_segs=1"} {
		if !strings.Contains(c.Offloads, want) {
			t.Errorf("GSO off: offloads %q lack %s", c.Offloads, want)
		}
	}
	if strings.Contains(c.Offloads, "gso_max_segs=1 ") {
		t.Errorf("GSO off limits the segments per packet: %q", c.Offloads)
	}
	s := c.Samples[0]
	txPkts, txBytes := s.Counters["client.tx_packets"], s.Counters["client.tx_bytes"]
	if txPkts == 0 || txBytes == 0 {
		t.Fatalf("no packets counted at the client's device: %v (missing %v)", s.Counters, s.CountersMissing)
	}
	t.Logf("%s (%s): the device sent %.0f packets of %.0f bytes on average", c.Key, c.Offloads, txPkts, txBytes/txPkts)
	if frame := txBytes / txPkts; frame > 1514 {
		t.Errorf("the device sent frames of %.0f bytes on average at MTU 1500", frame)
	}
	for _, b := range []string{"le3000", "le9000", "le16384", "le32768", "le65535", "gt65535"} {
		if n := s.Counters["client.tx_l3."+b]; n > 0 {
			t.Errorf("the device sent %.0f IP packets of %s bytes at MTU 1500 with GSO off", n, b)
		}
	}
}

// BenchmarkNoGSOWriteSizes measures TCP's goodput with GSO off at MTU 1500
// for 1 KiB and 64 KiB writes, interleaved, and reports both and their
// ratio. A kernel without GSO rises with the write size (the module
// README's no-GSO TCP row); docs/measurements/matrix.md records the runs.
//
//	go test -run '^$' -bench NoGSOWriteSizes -benchtime 5x ./bench/   # as root, veth
func BenchmarkNoGSOWriteSizes(b *testing.B) {
	testenv.Root(b)
	testenv.Require(b, kmod.FeatureVeth)
	var small, large []float64
	for i := 0; i < b.N; i++ {
		spec := shortSpec("tcp")
		spec.Sizes, spec.GSO, spec.Crypto, spec.Repeat = []int{1 << 10, 64 << 10}, []bool{false}, []bool{false}, 1
		spec.Time, spec.Warmup = time.Second, 300*time.Millisecond
		doc, err := (&bench.Runner{Spec: spec}).Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range doc.Cells {
			if c.Status != results.StatusOK {
				b.Fatalf("%s: %s %s", c.Key, c.Status, c.Error)
			}
			if c.Size == 1<<10 {
				small = append(small, c.MedianBps)
			} else {
				large = append(large, c.MedianBps)
			}
		}
	}
	ms, ml := results.SpreadOf(small).Median, results.SpreadOf(large).Median
	b.ReportMetric(ms/1e6, "Mbit/s-1KiB")
	b.ReportMetric(ml/1e6, "Mbit/s-64KiB")
	b.ReportMetric(ml/ms, "64KiB/1KiB")
}

// TestVethActsAsNIC: with GSO on, a veth pair carries what a NIC pair puts
// on the wire - TCP's 64 KiB packets cut into MSS-sized frames at the
// sending device - and the receiving device rebuilds them with GRO, so the
// receiver's stack takes in fewer, larger packets than the wire carried.
func TestVethActsAsNIC(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureBTF)
	_, c := explainedTCPCell(t, 64<<10, 0, true)
	s := c.Samples[0]
	// Frames and bytes as the sending device counted them, in one window:
	// the receiver's bytes over the same window run ahead of or behind the
	// sender's by what the socket buffers take in or give back (under TCG
	// that put 542 to 2456 device packets on an application MB, whatever
	// the offloads).
	txPkts, txBytes := s.Counters["client.tx_packets"], s.Counters["client.tx_bytes"]
	rxPkts := s.Counters["server.rx_packets"]
	if txPkts == 0 || txBytes == 0 {
		t.Fatalf("no packets counted at the client's device: %v (missing %v)", s.Counters, s.CountersMissing)
	}
	frame := txBytes / txPkts
	t.Logf("%s (%s; %s): the device sent %.0f packets of %.0f bytes on average, the receiver's stack took in %.0f packets", c.Key, c.Offloads, c.GSONote, txPkts, frame, rxPkts)
	// MSS 1448 at MTU 1500: frames of at most 1514 bytes (ACK-only ones
	// are shorter); a 64 KiB super-packet on the device would lift the
	// average far above.
	if frame > 1514 {
		t.Errorf("the device sent frames of %.0f bytes on average: super-packets reached the wire", frame)
	}
	// And not one IP packet over the MTU (tx_l3: the IP length).
	for _, b := range []string{"le3000", "le9000", "le16384", "le32768", "le65535", "gt65535"} {
		if n := s.Counters["client.tx_l3."+b]; n > 0 {
			t.Errorf("the device sent %.0f IP packets of %s bytes at MTU 1500: super-packets reached the wire", n, b)
		}
	}
	if rxPkts > txPkts/2 {
		t.Errorf("the receiver's stack took in %.0f packets of the %.0f on the wire: no GRO", rxPkts, txPkts)
	}
	if !strings.Contains(c.Offloads, "gro=true") || !strings.Contains(c.Offloads, "tso=false") {
		t.Errorf("offloads %q, want tso off and gro on", c.Offloads)
	}
}

// TestResumeMidConfiguration: every sample is saved as it is measured, so
// a run interrupted within a device configuration keeps the samples it
// took, and resuming takes only the rest of them.
func TestResumeMidConfiguration(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth)
	out := filepath.Join(t.TempDir(), "m.json")
	spec := shortSpec("tcp")
	spec.Crypto, spec.GSO, spec.MaxRepeat = []bool{false}, []bool{true}, 0
	ctx, cancel := context.WithCancel(context.Background())
	r := &bench.Runner{Spec: spec, Out: out, Progress: func(done, total int, c matrix.Cell) {
		if done == 1 {
			cancel() // after the first sample of the first cell
		}
	}}
	if _, err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run = %v", err)
	}
	saved, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	// The one window taken was kept, or set aside because the hypervisor
	// stole CPU during it (to be taken again): either way it is saved.
	if len(saved.Cells) != 1 || len(saved.Cells[0].Samples)+len(saved.Cells[0].Disturbed) != 1 || saved.Complete {
		t.Fatalf("after one sample the file has %d cells (complete=%v): %+v", len(saved.Cells), saved.Complete, saved.Cells)
	}
	kept := len(saved.Cells[0].Samples) == 1
	first := saved.Cells[0].Samples
	if !kept {
		first = saved.Cells[0].Disturbed
	}
	var done, total int
	doc, err := (&bench.Runner{Spec: spec, Out: out, Resume: true,
		Progress: func(d, tot int, _ matrix.Cell) { done, total = d, tot }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, ok := doc.Lookup(saved.Cells[0].Cell)
	if !ok || !doc.Complete || c.Status != results.StatusOK || len(c.Samples) != spec.Repeat {
		t.Fatalf("resumed: complete=%v, cell %+v; want %d samples", doc.Complete, c, spec.Repeat)
	}
	if again := c.Disturbed; kept && !c.Samples[0].Finished.Equal(first[0].Finished) || !kept && (len(again) == 0 || !again[0].Finished.Equal(first[0].Finished)) {
		t.Errorf("resumed: the window taken before the interruption (kept %v, finished %v) is not where it was: %+v", kept, first[0].Finished, c)
	}
	if done != total {
		t.Errorf("resumed run's progress ended at %d of %d", done, total)
	}
}

// TestReadSizeMessage: with ReadSize ReadMessage the receiver asks for one
// message per read, as iperf3 -l does, so it makes at least one read
// syscall per message delivered; the tables say how the receivers read.
func TestReadSizeMessage(t *testing.T) {
	testenv.Root(t)
	testenv.Require(t, kmod.FeatureVeth, kmod.FeatureBTF)
	doc, c := explainedTCPCell(t, 4<<10, matrix.ReadMessage, true)
	s := c.Samples[0]
	// The server's reads run on threads of this process's namespace. Each
	// asks for 4 KiB, so each returns at most that. The eBPF program counts
	// a read and the bytes it returned by one event, when it returns, in
	// the probes' window: so the bytes are at most 4 KiB times the reads,
	// whatever the scheduler did. (The default, reads of 64 KiB, gave
	// 20796 bytes a read here.)
	reads, got := s.Counters["process.syscall.read"], s.Counters["process.syscall_bytes.read"]
	t.Logf("%d bytes in %.3f s; in the probes' %v: %.0f reads returned %.0f bytes, %.0f bytes a read", s.Bytes, s.Seconds, doc.Spec.Time, reads, got, got/reads)
	if reads == 0 || got == 0 || got > float64(4<<10)*reads {
		t.Errorf("%.0f reads returned %.0f bytes in the probes' window: want some, and at most a 4 KiB message a read (counters %v, missing %v)", reads, got, s.Counters, s.CountersMissing)
	}
	var tbl bytes.Buffer
	render.WriteTables(&tbl, doc)
	if !strings.Contains(tbl.String(), "receivers read the message size at a time") {
		t.Errorf("the tables do not say how the receivers read:\n%s", tbl.String())
	}
}

// explainedTCPCell measures one sample of plain TCP upwards with GSO on or off,
// messages of size bytes and the receivers' read size, with --explain, and
// returns the document and its cell, which must have been measured.
func explainedTCPCell(t *testing.T, size, readSize int, gso bool) (*results.Document, results.CellResult) {
	t.Helper()
	spec := shortSpec("tcp")
	spec.Sizes, spec.GSO, spec.Crypto, spec.Repeat = []int{size}, []bool{gso}, []bool{false}, 1
	spec.ReadSize = readSize
	doc, err := (&bench.Runner{Spec: spec, Explain: true}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Cells[0]
	if c.Status != results.StatusOK {
		t.Fatalf("%s: %s %s", c.Key, c.Status, c.Error)
	}
	return doc, c
}

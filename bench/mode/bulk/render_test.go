package bulk

import (
	"bytes"
	"kquic.dev/bench/mode/bulk/conns"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// connsDoc is a results document of a bulk run with --conns 1,2 of tcp
// and quic-go, its samples made by Figures.
func connsDoc() *results.Document {
	s := matrix.DefaultSpec()
	s.Transports, s.Sizes, s.MTUs, s.GSO, s.Crypto = []string{"tcp", "quic-go"}, []int{64 << 10}, []int{1500}, []bool{true}, []bool{false}
	s.Conns, s.Repeat, s.MaxRepeat = []int{1, 2}, 1, 0
	s.Affinity = matrix.AutoAffinity([]int{0, 1, 2, 3})
	d := &results.Document{Spec: s}
	cores := []results.CoreCPU{{CPU: 0, Busy: 0.9, User: 0.3, System: 0.4, Softirq: 0.2}, {CPU: 1, Busy: 0.5, User: 0.1, System: 0.3, Softirq: 0.1}}
	for _, c := range s.Cells() {
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		if c.Transport == "quic-go" {
			r.Status, r.Note = results.StatusNA, "quic-go cannot turn encryption off"
			d.Cells = append(d.Cells, r)
			continue
		}
		per := []int64{1e9}
		if c.Conns == 2 {
			per = []int64{1e9, 5e8}
		}
		var bytes int64
		for _, b := range per {
			bytes += b
		}
		pairs, _ := s.Affinity.ForConns(c.Conns)
		var ps [][2]int
		for _, p := range pairs {
			ps = append(ps, [2]int{p.Client, p.Server})
		}
		bps := float64(bytes) * 8
		smp := results.Sample{Bytes: bytes, Seconds: 1, Bps: bps, Streams: 1, CPU: results.CPU{BusyCores: 1.4}}
		smp.Payload = conns.Figures(per, 1, ps, cores, nil, 1.4, bps)
		r.Samples = []results.Sample{smp}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	return d
}

// A run with --conns prints the scaling table (a row per transport, a
// column per connection count, the fairness and goodput per busy core
// beside each aggregate) and each cell's connections and CPUs; its CSV has
// the bulk columns, a run without --conns none.
func TestScalingTable(t *testing.T) {
	d := connsDoc()
	var b bytes.Buffer
	if err := render.WriteTables(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"Scaling, up (client to server), unencrypted, 64 KiB messages, MTU 1500",
		"1 conn", "2 conns",
		"tcp  8000 (1.00; 5714)  12000 (0.90; 8571)", // Jain's index of 8000 and 4000 Mbit/s: 0.9
		"8000[0>2] 4000[1>3]",
		"cpu0 90(30/40/20) cpu1 50(10/30/10)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tables lack %q", want)
		}
	}
	if strings.Contains(out, "quic-go  ") {
		t.Errorf("a transport with no cell but n/a has a row:\n%s", out)
	}
	var csv bytes.Buffer
	if err := render.WriteCSV(&csv, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if !strings.Contains(lines[0], ",conns,median_fairness,") || !strings.Contains(csv.String(), ",2,0.900,0.900,8571.429,1.400,8000.000 4000.000,cpu0:0.900/0.300/0.400/0.200") {
		t.Errorf("CSV:\n%s", csv.String())
	}
	d.Spec.Conns = nil
	csv.Reset()
	render.WriteCSV(&csv, d)
	if strings.Contains(csv.String(), "fairness") {
		t.Errorf("the CSV of a run without --conns has the bulk columns:\n%s", csv.String())
	}
	figs := ScalingFigures(connsDoc())
	if len(figs) != 1 || len(figs[0].Panels) != 1 || len(figs[0].Panels[0].Series) != 1 {
		t.Fatalf("scaling figures: %+v", figs)
	}
	pts := figs[0].Panels[0].Series[0].Points
	if len(pts) != 2 || pts[0].X != 1 || pts[1].X != 2 || pts[0].Y != 8000 || pts[1].Y != 12000 {
		t.Errorf("scaling points %+v", pts)
	}
}

// --explain says where the receiving device put a cell's flows, and warns
// when its connections landed on fewer receive queues than there were
// connections.
func TestExplainQueues(t *testing.T) {
	d := connsDoc()
	var r *results.CellResult
	for i := range d.Cells {
		if d.Cells[i].Conns == 2 && d.Cells[i].Status == results.StatusOK {
			r = &d.Cells[i]
		}
	}
	nic := results.NICQueues{End: "server", Device: "eth1", RxQueues: 4, TxQueues: 4, RSSUnavailable: "not reported by the driver",
		IRQs:   []results.QueueIRQ{{IRQ: 25, Name: "virtio0-input.0", CPUs: "0", Count: 900}, {IRQ: 27, Name: "virtio0-input.1", CPUs: "1", Count: 0}},
		Queues: []results.QueueUse{{Queue: "rx-0", Packets: 1000}, {Queue: "rx-1", Packets: 10}, {Queue: "rx-2", Packets: 0}, {Queue: "rx-3", Packets: 0}, {Queue: "tx-0", Packets: 5}}}
	conns.SampleOf(&r.Samples[0]).NIC = []results.NICQueues{{End: "client", Device: "eth1", RxQueues: 4}, nic}
	var b bytes.Buffer
	if err := render.WriteExplain(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		r.Key + ": the server's eth1, 4 receive queue(s): rx-0 99%, rx-1 1%; interrupts virtio0-input.0 900 (cpus 0)",
		"! 2 connections landed on 1 receive queue(s) of 4",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the explanation lacks %q", want)
		}
	}
	nic.Queues[1].Packets = 1000
	conns.SampleOf(&r.Samples[0]).NIC = []results.NICQueues{nic}
	b.Reset()
	render.WriteExplain(&b, d)
	if strings.Contains(b.String(), "landed on") {
		t.Errorf("two connections on two queues warned of:\n%s", b.String())
	}
}

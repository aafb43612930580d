// Package conns is the figures of a bulk cell of several connections side
// by side (kqbench matrix --conns), whoever measured them (bulk mode's Go
// transports, the native driver's tools): each connection's goodput,
// Jain's fairness index, every CPU's time by kind and the goodput per busy
// core, saved under "bulk" in a sample and summed up in its cell.
package conns

import (
	"maps"
	"slices"

	"kquic.dev/bench/results"
)

// Sample is the bulk figures of a sample of a cell of several connections
// (a run with --conns): each connection's goodput over the window, their
// fairness, and where the CPU time went.
type Sample struct {
	// Conns are the connections, in the order they were dialled; their
	// bytes add up to the sample's.
	Conns []Conn `json:"conns"`
	// Fairness is Jain's fairness index of the connections' goodput: 1
	// when they are equal, 1/n when one has it all.
	Fairness float64 `json:"fairness"`
	// Cores is every CPU of this host over the window, split by kind
	// (both ends in single-host mode), and ServerCores the server host's
	// in two-host mode.
	Cores       []results.CoreCPU `json:"cores,omitempty"`
	ServerCores []results.CoreCPU `json:"server_cores,omitempty"`
	// BusyCores is the busy CPU time of both ends' hosts (one host's in
	// single-host mode), and BpsPerBusyCore the goodput over it.
	BusyCores      float64 `json:"busy_cores"`
	BpsPerBusyCore float64 `json:"bps_per_busy_core"`
	// NIC is where each end's device put the sample's packets (two-host
	// mode: its queues, RSS, interrupts and masks), and NICMissing what
	// could not be read of it.
	NIC        []results.NICQueues `json:"nic,omitempty"`
	NICMissing []string            `json:"nic_missing,omitempty"`
}

// Conn is one connection of a sample: the bytes its receiver read in the
// window, its goodput, and the CPUs its two ends were pinned to (-1: not
// pinned; the server's in two-host mode is the peer's business).
type Conn struct {
	Bytes     int64   `json:"bytes"`
	Bps       float64 `json:"bps"`
	ClientCPU int     `json:"client_cpu"`
	ServerCPU int     `json:"server_cpu"`
}

// Summary is the bulk summary of a cell of several connections: the
// medians over its samples.
type Summary struct {
	// Conns is each connection's median goodput (bit/s), in dial order.
	ConnBps []float64 `json:"conn_median_bps"`
	// Fairness and MinFairness are the median and the lowest of the
	// samples' fairness indexes.
	Fairness    float64 `json:"median_fairness"`
	MinFairness float64 `json:"min_fairness"`
	// BpsPerBusyCore and BusyCores are the samples' medians.
	BpsPerBusyCore float64 `json:"median_bps_per_busy_core"`
	BusyCores      float64 `json:"median_busy_cores"`
	// Cores is each CPU's median time by kind (this host's).
	Cores []results.CoreCPU `json:"median_cores,omitempty"`
}

// payloadKey is the JSON key of the mode's figures, in a sample and in a
// cell.
const payloadKey = "bulk"

// PayloadKey is "bulk".
func (*Sample) PayloadKey() string { return payloadKey }

// PayloadKey is "bulk".
func (*Summary) PayloadKey() string { return payloadKey }

func init() {
	results.RegisterPayload(results.PayloadType{
		Key:       payloadKey,
		Sample:    func() results.Payload { return &Sample{} },
		Cell:      func() results.Payload { return &Summary{} },
		CellAfter: "peer_offloads",
		Summarize: summarize,
		Named: []results.NamedFigure{
			{Name: "fairness", Unit: "", About: "Jain's fairness index of the connections' goodput; bulk mode with --conns", Value: func(p results.Payload) float64 { return p.(*Sample).Fairness }},
			{Name: "per-core", Unit: "Mbit/s per busy core", About: "goodput per busy core; bulk mode with --conns", Value: func(p results.Payload) float64 { return p.(*Sample).BpsPerBusyCore / 1e6 }},
		},
	})
}

// SampleOf is the bulk figures of a sample, nil for a sample without.
func SampleOf(s *results.Sample) *Sample {
	p, _ := s.Payload.(*Sample)
	return p
}

// SummaryOf is the bulk summary of a cell, nil for a cell without.
func SummaryOf(r *results.CellResult) *Summary {
	p, _ := r.Payload.(*Summary)
	return p
}

// Figures are a sample's bulk figures of its connections' bytes over secs
// (goodput bps in all), with the CPU pairs they ran on (nil: not pinned)
// and both hosts' CPUs (server nil in single-host mode; busy the busy
// cores of both).
func Figures(per []int64, secs float64, pairs [][2]int, cores, server []results.CoreCPU, busy, bps float64) *Sample {
	s := &Sample{Cores: cores, ServerCores: server, BusyCores: busy}
	bpss := make([]float64, len(per))
	for i, b := range per {
		c := Conn{Bytes: b, ClientCPU: -1, ServerCPU: -1}
		if secs > 0 {
			c.Bps = float64(b) * 8 / secs
		}
		if pairs != nil {
			c.ClientCPU, c.ServerCPU = pairs[i][0], pairs[i][1]
		}
		bpss[i] = c.Bps
		s.Conns = append(s.Conns, c)
	}
	s.Fairness = results.JainIndex(bpss)
	if busy > 0 {
		s.BpsPerBusyCore = bps / busy
	}
	return s
}

// summarize sets the cell's summary: the medians over its samples.
func summarize(r *results.CellResult) {
	var fair, perCore, busy []float64
	var conns [][]float64
	cores := map[int][4][]float64{}
	for i := range r.Samples {
		s := SampleOf(&r.Samples[i])
		if s == nil {
			continue
		}
		fair = append(fair, s.Fairness)
		perCore = append(perCore, s.BpsPerBusyCore)
		busy = append(busy, s.BusyCores)
		for j, c := range s.Conns {
			for len(conns) <= j {
				conns = append(conns, nil)
			}
			conns[j] = append(conns[j], c.Bps)
		}
		for _, c := range s.Cores {
			k := cores[c.CPU]
			k[0], k[1], k[2], k[3] = append(k[0], c.Busy), append(k[1], c.User), append(k[2], c.System), append(k[3], c.Softirq)
			cores[c.CPU] = k
		}
	}
	if len(fair) == 0 {
		return
	}
	med := func(v []float64) float64 { return results.SpreadOf(v).Median }
	sum := &Summary{Fairness: med(fair), MinFairness: slices.Min(fair), BpsPerBusyCore: med(perCore), BusyCores: med(busy)}
	for _, v := range conns {
		sum.ConnBps = append(sum.ConnBps, med(v))
	}
	for _, cpu := range slices.Sorted(maps.Keys(cores)) {
		k := cores[cpu]
		sum.Cores = append(sum.Cores, results.CoreCPU{CPU: cpu, Busy: med(k[0]), User: med(k[1]), System: med(k[2]), Softirq: med(k[3])})
	}
	r.Payload = sum
}

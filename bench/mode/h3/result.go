package h3

import (
	"kquic.dev/bench/latency"
	"kquic.dev/bench/results"
)

// WebSettings are one end's HTTP-layer settings in force in a sample
// (web.Settings, as the results record them).
type WebSettings struct {
	// Protocol is "h2" or "h3", Stack what it runs on.
	Protocol string `json:"protocol"`
	Stack    string `json:"stack"`
	// StreamWindow and ConnWindow are the receive flow-control windows
	// the end grants (bytes); with Autotuned they start at
	// InitialStreamWindow and grow up to these. Zero: not known.
	StreamWindow        int64 `json:"stream_window,omitempty"`
	ConnWindow          int64 `json:"conn_window,omitempty"`
	Autotuned           bool  `json:"autotuned,omitempty"`
	InitialStreamWindow int64 `json:"initial_stream_window,omitempty"`
	MaxStreams          int64 `json:"max_streams,omitempty"`
	// UDPRcvBufAsked and UDPRcvBufGranted are the UDP socket's SO_RCVBUF
	// asked and as the kernel reports it (0: none or not known).
	UDPRcvBufAsked   int `json:"udp_rcvbuf_asked,omitempty"`
	UDPRcvBufGranted int `json:"udp_rcvbuf_granted,omitempty"`
	// Notes say where each value comes from.
	Notes []string `json:"notes,omitempty"`
}

// Sample is what one sample of an h3-mode cell measured (one run of its
// workload, package web).
type Sample struct {
	Workload string `json:"workload"`
	// Requests completed with a checked body, Bytes their bodies, Seconds
	// the time measured: a download's or upload's from the request to its
	// last byte, the objects' window, a page's time to last byte, the sum
	// of the setups' times to first byte.
	Requests int64   `json:"requests"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	// TTFBSeconds is the time to the response's headers (a download's; a
	// setup's median).
	TTFBSeconds float64 `json:"ttfb_seconds,omitempty"`
	// Latency summarizes each request's time (objects, setups), and
	// LatencyHistogram is its HDR histogram (bench/latency's encoding),
	// for merging the samples.
	Latency          *latency.Summary `json:"latency,omitempty"`
	LatencyHistogram string           `json:"latency_histogram,omitempty"`
	// Resumed and Early count the setups that resumed a session and whose
	// request went in 0-RTT data the server took.
	Resumed int64 `json:"resumed,omitempty"`
	Early   int64 `json:"early,omitempty"`
	// Errors counts the requests that failed; ErrorText names the kinds
	// and the first message of each.
	Errors    int64  `json:"errors,omitempty"`
	ErrorText string `json:"error_text,omitempty"`
	// Client and Server are the two ends' HTTP-layer settings.
	Client WebSettings `json:"client_settings"`
	Server WebSettings `json:"server_settings"`
	// ServerRcvbufErrors and ClientRcvbufErrors are the UDP datagrams the
	// kernel dropped for a full socket receive buffer (RcvbufErrors of
	// /proc/net/snmp) in each end's namespace over the sample; -1 where
	// they could not be read.
	ServerRcvbufErrors int64 `json:"server_rcvbuf_errors"`
	ClientRcvbufErrors int64 `json:"client_rcvbuf_errors"`
	// ServerRetrans and ClientRetrans are what each namespace's kernel sent
	// again over the sample: TCP segments (Tcp RetransSegs) and kernel
	// QUIC frames (QuicFrmRetrans); quic-go's own are not counted. -1
	// where they could not be read.
	ServerRetrans int64 `json:"server_retrans"`
	ClientRetrans int64 `json:"client_retrans"`
	// RTTSeconds is the netem round trip in force (0: none added).
	RTTSeconds float64 `json:"rtt_seconds,omitempty"`
	// RmemMax is net.core.rmem_max in the server's namespace (bytes; 0:
	// not read): the most SO_RCVBUF grants without SO_RCVBUFFORCE.
	RmemMax int `json:"rmem_max,omitempty"`
}

// Figure is the sample's figure of merit, in the unit FigureOf names:
// goodput in bit/s, requests per second, or a time in seconds.
func (w *Sample) Figure() float64 {
	switch w.Workload {
	case WorkloadDownload, WorkloadUpload:
		if w.Seconds > 0 {
			return float64(w.Bytes) * 8 / w.Seconds
		}
	case WorkloadObjects:
		if w.Seconds > 0 {
			return float64(w.Requests) / w.Seconds
		}
	case WorkloadPage:
		return w.Seconds
	default: // the setups
		return w.TTFBSeconds
	}
	return 0
}

// FigureOf names a workload's figure of merit ("goodput bit/s",
// "requests/s", "time to last byte s", "time to first byte s") and whether
// lower is better.
func FigureOf(workload string) (name string, lowerBetter bool) {
	switch workload {
	case WorkloadDownload, WorkloadUpload:
		return "goodput bit/s", false
	case WorkloadObjects:
		return "requests/s", false
	case WorkloadPage:
		return "time to last byte s", true
	}
	return "time to first byte s", true
}

// Summary sums up an h3-mode cell over its samples.
type Summary struct {
	// Figure names the figure of merit (FigureOf); Median, Min, Max,
	// Spread and WideSpread are over the samples' figures.
	Figure      string  `json:"figure"`
	LowerBetter bool    `json:"lower_better,omitempty"`
	Median      float64 `json:"median"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	Spread      float64 `json:"spread"`
	WideSpread  bool    `json:"wide_spread,omitempty"`
	// Requests, Errors, Resumed, Early and the receive-buffer drops are
	// over all samples.
	Requests           int64 `json:"requests"`
	Errors             int64 `json:"errors,omitempty"`
	Resumed            int64 `json:"resumed,omitempty"`
	Early              int64 `json:"early,omitempty"`
	ServerRcvbufErrors int64 `json:"server_rcvbuf_errors"`
	ClientRcvbufErrors int64 `json:"client_rcvbuf_errors"`
	// Retrans is the kernel's retransmissions in both namespaces
	// (Sample.ServerRetrans and ClientRetrans).
	Retrans int64 `json:"retrans"`
	// Latency is over every request of every sample (their histograms
	// merged), where the workload has many.
	Latency *latency.Summary `json:"latency,omitempty"`
}

// payloadKey is the JSON key of the mode's figures, in a sample and in a
// cell.
const payloadKey = "web"

// PayloadKey is "web".
func (*Sample) PayloadKey() string { return payloadKey }

// PayloadKey is "web".
func (*Summary) PayloadKey() string { return payloadKey }

func init() {
	results.RegisterPayload(results.PayloadType{
		Key:       payloadKey,
		Sample:    func() results.Payload { return &Sample{} },
		Cell:      func() results.Payload { return &Summary{} },
		Summarize: summarize,
		Metric: func(p results.Payload) (string, float64) {
			w := p.(*Sample)
			return metric(w.Workload), value(w)
		},
		Plotted: func(p results.Payload) bool { return p.(*Summary).Figure == "goodput bit/s" },
	})
}

// SampleOf is the h3 figures of a sample, nil for a sample without.
func SampleOf(s *results.Sample) *Sample {
	p, _ := s.Payload.(*Sample)
	return p
}

// SummaryOf is the h3 summary of a cell, nil for a cell without.
func SummaryOf(r *results.CellResult) *Summary {
	p, _ := r.Payload.(*Summary)
	return p
}

// summarize computes an h3-mode cell's summary: its figure of merit over
// the samples, in place of the goodput's spread (the goodput figures hold
// the bodies' goodput, as for every mode).
func summarize(r *results.CellResult) {
	var v []float64
	sum := &Summary{}
	var merged *latency.Histogram
	for i := range r.Samples {
		w := SampleOf(&r.Samples[i])
		if w == nil {
			continue
		}
		sum.Figure, sum.LowerBetter = FigureOf(w.Workload)
		v = append(v, w.Figure())
		sum.Requests += w.Requests
		sum.Errors += w.Errors
		sum.Resumed += w.Resumed
		sum.Early += w.Early
		sum.ServerRcvbufErrors += max(w.ServerRcvbufErrors, 0)
		sum.ClientRcvbufErrors += max(w.ClientRcvbufErrors, 0)
		sum.Retrans += max(w.ServerRetrans, 0) + max(w.ClientRetrans, 0)
		if w.LatencyHistogram != "" {
			if h, err := latency.Decode(w.LatencyHistogram); err == nil {
				if merged == nil {
					merged = latency.New()
				}
				merged.Merge(h)
			}
		}
	}
	if len(v) == 0 {
		return
	}
	sp := results.SpreadOf(v)
	sum.Median, sum.Min, sum.Max, sum.Spread, sum.WideSpread = sp.Median, sp.Min, sp.Max, sp.Width, sp.Wide
	if merged != nil {
		l := merged.Summary()
		sum.Latency = &l
	}
	r.Payload = sum
	r.WideSpread = sum.WideSpread
	r.Spread = sum.Spread
}

// metric names the compared figure of a workload's cells, in the unit
// value gives: Mbit/s, requests/s or milliseconds.
func metric(workload string) string {
	switch fig, _ := FigureOf(workload); fig {
	case "goodput bit/s":
		return "goodput Mbit/s"
	case "requests/s":
		return "requests/s"
	case "time to last byte s":
		return "time to last byte ms (lower is better)"
	}
	return "time to first byte ms (lower is better)"
}

// value is a sample's figure in metric's unit.
func value(w *Sample) float64 {
	f := w.Figure()
	switch w.Workload {
	case WorkloadDownload, WorkloadUpload:
		return f / 1e6
	case WorkloadObjects:
		return f
	}
	return f * 1e3
}

package web

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"kquic.dev/bench/latency"
)

// Result is what one workload measured.
type Result struct {
	// Workload is "download", "upload", "objects", "page" or "setup-…";
	// Client the transport's name (Client.Name).
	Workload string `json:"workload"`
	Client   string `json:"client"`
	// ClientSettings and ServerSettings are the two ends' HTTP-layer
	// settings in force.
	ClientSettings Settings `json:"client_settings"`
	ServerSettings Settings `json:"server_settings"`
	// Size is the body size of each request (bytes), Conns and Streams the
	// connections and requests in flight on each, Resources a page's
	// sub-resources.
	Size      int64 `json:"size,omitempty"`
	Conns     int   `json:"conns,omitempty"`
	Streams   int   `json:"streams,omitempty"`
	Resources int   `json:"resources,omitempty"`
	// Requests is how many requests completed with a checked body, Bytes
	// their body bytes, Seconds the time measured (the workload says
	// which).
	Requests int64   `json:"requests"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	// TTFB is the time to the first response byte, for single requests.
	TTFBSeconds float64 `json:"ttfb_seconds,omitempty"`
	// ServerSeconds is the server's own time for an upload's body.
	ServerSeconds float64 `json:"server_seconds,omitempty"`
	// Latency summarizes each request's time, where there are many.
	Latency *latency.Summary `json:"latency,omitempty"`
	// Histogram is Latency's histogram, for merging results.
	Histogram *latency.Histogram `json:"-"`
	// Resumed and Early count the setups whose handshake resumed a session
	// and whose request went in 0-RTT.
	Resumed int64 `json:"resumed,omitempty"`
	Early   int64 `json:"early,omitempty"`
	// Errors counts the requests that failed.
	Errors Errors `json:"errors"`
}

// Goodput is Bytes/Seconds in bytes per second.
func (r Result) Goodput() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Bytes) / r.Seconds
}

// RequestsPerSecond is Requests/Seconds.
func (r Result) RequestsPerSecond() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Seconds
}

// Errors counts failed requests by kind ("dial", "roundtrip", "status",
// "body", "checksum", ...), keeping the first message of each kind.
type Errors struct {
	Count  int64             `json:"count"`
	ByKind map[string]int64  `json:"by_kind,omitempty"`
	First  map[string]string `json:"first,omitempty"`
}

// Add counts one failure of kind.
func (e *Errors) Add(kind string, err error) {
	if e.ByKind == nil {
		e.ByKind, e.First = map[string]int64{}, map[string]string{}
	}
	e.Count++
	e.ByKind[kind]++
	if _, ok := e.First[kind]; !ok {
		e.First[kind] = err.Error()
	}
}

// Merge adds o's counts.
func (e *Errors) Merge(o Errors) {
	if o.Count == 0 {
		return
	}
	if e.ByKind == nil {
		e.ByKind, e.First = map[string]int64{}, map[string]string{}
	}
	e.Count += o.Count
	for k, n := range o.ByKind {
		e.ByKind[k] += n
	}
	for k, m := range o.First {
		if _, ok := e.First[k]; !ok {
			e.First[k] = m
		}
	}
}

// String lists the counts and first messages ("" when none failed).
func (e Errors) String() string {
	if e.Count == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(e.ByKind)) {
		fmt.Fprintf(&b, "%d %s (first: %s); ", e.ByKind[k], k, e.First[k])
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// syncErrors is Errors for concurrent use.
type syncErrors struct {
	mu sync.Mutex
	e  Errors
}

func (s *syncErrors) Add(kind string, err error) {
	s.mu.Lock()
	s.e.Add(kind, err)
	s.mu.Unlock()
}

func (s *syncErrors) get() Errors {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e
}

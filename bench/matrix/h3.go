package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ModeH3 measures web workloads (bench/web) over HTTP/3 and HTTP/2: one
// http.Handler served by HTTP/3 over kernel QUIC, HTTP/3 over quic-go
// (quic-go's own http3, and this project's HTTP/3 over quic-go), HTTP/2
// over kernel TLS and HTTP/2 over crypto/tls; the cells are the
// transports times the workloads (Spec.Web).
const ModeH3 = Mode("h3")

// The h3 mode's transports (Spec.Transports in --mode h3).
const (
	H3KQUIC     = "h3-kquic"   // this project's HTTP/3 (quicnet/http3) over kernel QUIC
	H3QuicGo    = "h3-quic-go" // quic-go's own http3, the reference users pick
	H3Quicnet   = "h3-quicnet" // this project's HTTP/3 over quic-go: the HTTP layer's cost apart from the transport's
	H2KTLS      = "h2-ktls"    // golang.org/x/net/http2 over kernel TLS
	H2CryptoTLS = "h2-tls"     // net/http's HTTP/2 over crypto/tls (TCP), as shipped
)

// H3Transports are the h3 mode's transports, in table order.
func H3Transports() []string {
	return []string{H3KQUIC, H3QuicGo, H3Quicnet, H2KTLS, H2CryptoTLS}
}

// H3TransportText says what an h3-mode transport is, for a table's legend.
func H3TransportText(t string) string {
	switch t {
	case H3KQUIC:
		return "HTTP/3 (this project's quicnet/http3) over kernel QUIC"
	case H3QuicGo:
		return "HTTP/3: quic-go's own http3 over quic-go"
	case H3Quicnet:
		return "HTTP/3: this project's quicnet/http3 over quic-go"
	case H2KTLS:
		return "HTTP/2 (golang.org/x/net/http2) over kernel TLS"
	case H2CryptoTLS:
		return "HTTP/2 (net/http) over crypto/tls and TCP"
	}
	return t
}

// The h3 mode's workloads (WebSpec.Workloads, Cell.Workload).
const (
	WorkloadDownload     = "download"      // GET of a --sizes body: goodput
	WorkloadUpload       = "upload"        // POST of a --sizes body: goodput
	WorkloadObjects      = "objects"       // small objects, Conns connections with Streams in flight each: requests/s, latency
	WorkloadPage         = "page"          // one HTML and its Resources at once: time to last byte
	WorkloadSetupFull    = "setup-full"    // a fresh connection's full handshake: time to first byte
	WorkloadSetupResumed = "setup-resumed" // resuming a session ticket
	WorkloadSetup0RTT    = "setup-0rtt"    // the request in 0-RTT data
)

// H3Workloads are the workloads in table order; "setup" in a spec names
// the three setups.
func H3Workloads() []string {
	return []string{WorkloadDownload, WorkloadUpload, WorkloadObjects, WorkloadPage, WorkloadSetupFull, WorkloadSetupResumed, WorkloadSetup0RTT}
}

// WebSpec is the h3 mode's part of a spec.
type WebSpec struct {
	// Workloads are the workloads measured (default download, objects,
	// page, setup).
	Workloads []string `json:"workloads"`
	// ObjectSize is the body of each small object and page resource
	// (bytes, at most MaxWebObject).
	ObjectSize int `json:"object_size"`
	// Resources is the page's sub-resources.
	Resources int `json:"resources"`
	// Rounds is how many fresh connections a setup sample makes.
	Rounds int `json:"rounds"`
}

// Limits of the h3 mode.
const (
	MaxWebSize   = 1 << 30 // a download or upload
	MaxWebObject = 1 << 20 // bench/web.MaxObject
	MaxResources = 1000
)

// DefaultWebSpec is the h3 mode's defaults.
func DefaultWebSpec() WebSpec {
	return WebSpec{Workloads: []string{WorkloadDownload, WorkloadObjects, WorkloadPage, "setup"}, ObjectSize: 4 << 10, Resources: 20, Rounds: 5}
}

// ExpandWorkloads resolves "setup" into the three setups, in table order.
func ExpandWorkloads(ws []string) []string {
	var out []string
	for _, w := range H3Workloads() {
		if slices.Contains(ws, w) || (strings.HasPrefix(w, "setup-") && slices.Contains(ws, "setup")) {
			out = append(out, w)
		}
	}
	return out
}

// validateH3 checks an h3-mode spec, naming every problem.
func (s *Spec) validateH3() []error {
	var errs []error
	if len(s.Transports) == 0 {
		errs = append(errs, errors.New("no transports"))
	}
	for _, t := range s.Transports {
		if !slices.Contains(H3Transports(), t) {
			errs = append(errs, fmt.Errorf("transport %q is not one of --mode h3's: %s", t, strings.Join(H3Transports(), ", ")))
		}
	}
	w := s.Web
	if w == nil {
		return append(errs, errors.New("--mode h3 needs its web settings (workloads, object size, resources, rounds)"))
	}
	if len(w.Workloads) == 0 {
		errs = append(errs, errors.New("no workloads"))
	}
	for _, x := range w.Workloads {
		if x != "setup" && !slices.Contains(H3Workloads(), x) {
			errs = append(errs, fmt.Errorf("workload %q: use %s or setup", x, strings.Join(H3Workloads(), ", ")))
		}
	}
	bodies := slices.Contains(w.Workloads, WorkloadDownload) || slices.Contains(w.Workloads, WorkloadUpload)
	if bodies && len(s.Sizes) == 0 {
		errs = append(errs, errors.New("no --sizes for the download and upload"))
	}
	for _, z := range s.Sizes {
		if z <= 0 || z > MaxWebSize {
			errs = append(errs, fmt.Errorf("size %d: a download or upload is 1 byte to 1 GiB", z))
		}
	}
	if w.ObjectSize < 0 || w.ObjectSize > MaxWebObject {
		errs = append(errs, fmt.Errorf("object size %d: must be 0 to %d bytes", w.ObjectSize, MaxWebObject))
	}
	if w.Resources < 0 || w.Resources > MaxResources {
		errs = append(errs, fmt.Errorf("page resources %d: must be 0 to %d", w.Resources, MaxResources))
	}
	if w.Rounds < 1 {
		errs = append(errs, fmt.Errorf("setup rounds %d: must be at least 1", w.Rounds))
	}
	if slices.Contains(w.Workloads, WorkloadObjects) {
		if len(s.Conns) == 0 {
			errs = append(errs, errors.New("the objects workload needs at least one connection count (--conns)"))
		}
		for _, n := range s.Conns {
			if n < 1 || n > MaxConns {
				errs = append(errs, fmt.Errorf("connections %d: must be 1..%d", n, MaxConns))
			}
		}
	}
	errs = append(errs, s.validateMTUs()...)
	if len(s.GSO) == 0 {
		errs = append(errs, errors.New("--gso needs at least one of on, off"))
	}
	if s.Streams < 1 || s.Streams > 1000 {
		errs = append(errs, fmt.Errorf("streams (requests in flight per connection) %d: must be 1..1000", s.Streams))
	}
	if s.Time <= 0 {
		errs = append(errs, fmt.Errorf("time %v: must be positive", s.Time))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %v: must not be negative", s.Warmup))
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	if s.MaxRepeat != 0 && s.MaxRepeat < s.Repeat {
		errs = append(errs, fmt.Errorf("max-repeat %d: must be 0 (no more rounds) or at least repeat (%d)", s.MaxRepeat, s.Repeat))
	}
	if len(s.Drivers) > 0 && !(len(s.Drivers) == 1 && s.Drivers[0] == DriverGo) {
		errs = append(errs, errors.New("--mode h3 has the go driver only"))
	}
	errs = append(errs, s.validateImpairments()...)
	return errs
}

// h3Cells enumerates an h3-mode matrix: per MTU, GSO setting and
// congestion control, every workload (a download and upload per size, the
// objects per connection count) of every transport.
func (s *Spec) h3Cells() []Cell {
	if s.Web == nil {
		return nil
	}
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, cc := range s.CCAxis() {
				for _, w := range ExpandWorkloads(s.Web.Workloads) {
					base := Cell{MTU: mtu, GSO: gso, Crypto: true, Streams: 1, Mode: ModeH3, Workload: w, Netem: s.Netem, CC: cc, Size: s.Web.ObjectSize}
					var shapes []Cell
					switch w {
					case WorkloadDownload, WorkloadUpload:
						base.Direction = Down
						if w == WorkloadUpload {
							base.Direction = Up
						}
						for _, z := range s.Sizes {
							c := base
							c.Size = z
							shapes = append(shapes, c)
						}
					case WorkloadObjects:
						for _, n := range s.Conns {
							c := base
							c.Conns, c.Streams = n, s.Streams
							shapes = append(shapes, c)
						}
					case WorkloadPage:
						c := base
						c.Streams = s.Web.Resources
						shapes = append(shapes, c)
					default: // the setups: a 1-byte object
						c := base
						c.Size, c.Early = 1, w == WorkloadSetup0RTT
						shapes = append(shapes, c)
					}
					for _, c := range shapes {
						for _, t := range s.Transports {
							c.Transport = t
							out = append(out, c)
						}
					}
				}
			}
		}
	}
	return out
}

// h3Key is an h3-mode cell's key (before the common suffixes).
func (c Cell) h3Key() string {
	k := fmt.Sprintf("%s/h3/%s/size=%d/mtu=%d/gso=%s", c.Transport, c.Workload, c.Size, c.MTU, OnOff(c.GSO))
	switch c.Workload {
	case WorkloadObjects:
		k += fmt.Sprintf("/conns=%d/streams=%d", c.Conns, c.Streams)
	case WorkloadPage:
		k += fmt.Sprintf("/resources=%d", c.Streams)
	}
	return k
}

// WorkloadText names an h3-mode cell's workload for tables: "download 1
// MiB", "objects 4 KiB, 2 conns x 8", "page of 20 x 4 KiB", "setup 0-RTT".
func WorkloadText(c Cell) string {
	switch c.Workload {
	case WorkloadDownload, WorkloadUpload:
		return fmt.Sprintf("%s %s", c.Workload, SizeText(c.Size))
	case WorkloadObjects:
		return fmt.Sprintf("objects %s, %d conn x %d", SizeText(c.Size), c.Conns, c.Streams)
	case WorkloadPage:
		return fmt.Sprintf("page of %d x %s", c.Streams, SizeText(c.Size))
	case WorkloadSetupFull:
		return "setup 1-RTT (full)"
	case WorkloadSetupResumed:
		return "setup resumed"
	case WorkloadSetup0RTT:
		return "setup 0-RTT"
	}
	return c.Workload
}

// SizeText is a byte count as tables write it: "1 MiB", "4 KiB", "700 B".
func SizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func init() {
	if err := RegisterModeSpec(ModeH3, ModeSpec{Validate: (*Spec).validateH3, Cells: (*Spec).h3Cells}); err != nil {
		panic(err)
	}
}

// Package h3 is kqbench's web mode (--mode h3): one http.Handler
// (package web, under it) served by HTTP/3 over kernel QUIC (this project's
// quicnet/http3 on kquic), HTTP/3 over quic-go (quic-go's own http3, and
// this project's HTTP/3 over quic-go, which separates the HTTP layer's
// cost from the transport's), HTTP/2 over kernel TLS and HTTP/2 over
// crypto/tls, between the two namespaces of the single-host topology, and
// beside them Debian's ngtcp2 programs (h3-ngtcp2: a C stack's download
// and upload, timed by its client's qlog; ngtcp2_linux.go). A
// cell is a transport and a workload: a download or upload of --sizes
// bytes (goodput), small objects (requests per second and latency
// percentiles), a page and its resources at once (time to last byte), or
// a fresh connection's setup (full, resumed, 0-RTT: time to first byte).
// Every body is checked (package web's content checker and CRC-32C). Each
// sample records both ends' HTTP-layer settings and the UDP datagrams the
// kernel dropped for a full receive buffer in each namespace, which
// --explain names as brakes. In two-host mode the server end is a kqbench
// server, which serves the handler on the operations this mode adds to
// the control protocol (remote_linux.go).
//
// Its spec, flags and keys (spec.go), results (result.go) and tables
// (render.go) build on every platform; its measuring, its rows and its
// server half on Linux.
package h3

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kquic.dev/bench/matrix"
)

// Name is the mode's name (--mode h3).
const Name = matrix.Mode("h3")

func init() {
	def := DefaultWebSpec()
	if err := matrix.RegisterModeSpec(Name, matrix.ModeSpec{
		About:    "web workloads over HTTP/3 on kernel QUIC and quic-go, HTTP/2 on kTLS and TLS: see --workloads",
		Validate: validate,
		Cells:    cells,
		Key:      key,
		Settings: &matrix.SettingsType{Key: "web", New: func() any { return &WebSpec{} }},
		Notes:    map[string]string{"affinity": "the server is a process of its own on SERVER, kqbench runs the client on CLIENT, GOMAXPROCS 1 each"},
		Flags: []matrix.Flag{
			{Name: "workloads", List: true, Default: strings.Join(def.Workloads, ","), Usage: "the web workloads: download (GET of each --sizes, goodput), upload (POST of each --sizes), objects (--conns connections with --streams requests in flight each: requests/s, latency), page (one HTML and --resources objects at once: time to last byte), setup (a fresh connection's full, resumed and 0-RTT handshakes: time to first byte), or setup-full, setup-resumed, setup-0rtt"},
			{Name: "object-size", Default: "4K", Usage: "the body of each small object and page resource (bytes, or with K/M; up to 1M)"},
			{Name: "resources", Int: true, Default: fmt.Sprint(def.Resources), Usage: "the page's sub-resources"},
			{Name: "rounds", Int: true, Default: fmt.Sprint(def.Rounds), Usage: "fresh connections per setup sample"},
			{Name: "conns", List: true, Default: "1", Usage: "the objects workload's connections"},
		},
		Apply: apply,
	}); err != nil {
		panic(err)
	}
}

// apply sets the mode's part of the spec and its defaults where the flags
// were not given: its five transports, a 1 MiB download, MTU 1500, GSO on,
// two connections with eight requests in flight each.
func apply(s *matrix.Spec, f matrix.Flags) error {
	if f.Changed("direction") || f.Changed("crypto") {
		return errors.New("--direction and --crypto do not apply to --mode h3: its workloads say the direction, and every row encrypts")
	}
	obj, err := matrix.ParseSize(f.Value("object-size"))
	if err != nil {
		return fmt.Errorf("--object-size: %w", err)
	}
	w := &WebSpec{Workloads: matrix.SplitList(f.List("workloads")), ObjectSize: obj}
	if w.Resources, err = strconv.Atoi(f.Value("resources")); err != nil {
		return fmt.Errorf("--resources: %w", err)
	}
	if w.Rounds, err = strconv.Atoi(f.Value("rounds")); err != nil {
		return fmt.Errorf("--rounds: %w", err)
	}
	s.Settings = w
	if s.Conns, err = matrix.ParseCounts(f.List("conns"), "--conns"); err != nil {
		return err
	}
	if !f.Changed("transports") {
		s.Transports = Transports()
	}
	if !f.Changed("sizes") {
		s.Sizes = []int{1 << 20}
	}
	if !f.Changed("mtus") {
		s.MTUs = []int{1500}
	}
	if !f.Changed("gso") {
		s.GSO = []bool{true}
	}
	if !f.Changed("streams") {
		s.Streams = 8
	}
	if !f.Changed("conns") {
		s.Conns = []int{2}
	}
	s.Directions, s.Crypto = nil, []bool{true}
	return nil
}

// The mode's transports, its rows (Spec.Transports in --mode h3).
const (
	KQUIC       = "h3-kquic"   // this project's HTTP/3 (quicnet/http3) over kernel QUIC
	QuicGo      = "h3-quic-go" // quic-go's own http3, the reference users pick
	Quicnet     = "h3-quicnet" // this project's HTTP/3 over quic-go: the HTTP layer's cost apart from the transport's
	H2KTLS      = "h2-ktls"    // golang.org/x/net/http2 over kernel TLS
	H2CryptoTLS = "h2-tls"     // net/http's HTTP/2 over crypto/tls (TCP), as shipped
	// Ngtcp2 is Debian's ngtcp2 example programs (gtlsserver, gtlsclient:
	// HTTP/3 in C on GnuTLS) between the same namespaces: download and
	// upload; the others are n/a (its client requests a fixed list of
	// URLs at once and exits).
	Ngtcp2 = "h3-ngtcp2"
)

// Transports are the mode's transports, in table order.
func Transports() []string {
	return []string{KQUIC, QuicGo, Quicnet, H2KTLS, H2CryptoTLS, Ngtcp2}
}

// TransportText says what a transport of the mode is, for a table's
// legend.
func TransportText(t string) string {
	switch t {
	case KQUIC:
		return "HTTP/3 (this project's quicnet/http3) over kernel QUIC"
	case QuicGo:
		return "HTTP/3: quic-go's own http3 over quic-go"
	case Quicnet:
		return "HTTP/3: this project's quicnet/http3 over quic-go"
	case H2KTLS:
		return "HTTP/2 (golang.org/x/net/http2) over kernel TLS"
	case H2CryptoTLS:
		return "HTTP/2 (net/http) over crypto/tls and TCP"
	case Ngtcp2:
		return "HTTP/3: Debian's ngtcp2 programs (gtlsserver, gtlsclient; C, GnuTLS)"
	}
	return t
}

// The mode's workloads (WebSpec.Workloads, Cell.Workload).
const (
	WorkloadDownload     = "download"      // GET of a --sizes body: goodput
	WorkloadUpload       = "upload"        // POST of a --sizes body: goodput
	WorkloadObjects      = "objects"       // small objects, Conns connections with Streams in flight each: requests/s, latency
	WorkloadPage         = "page"          // one HTML and its Resources at once: time to last byte
	WorkloadSetupFull    = "setup-full"    // a fresh connection's full handshake: time to first byte
	WorkloadSetupResumed = "setup-resumed" // resuming a session ticket
	WorkloadSetup0RTT    = "setup-0rtt"    // the request in 0-RTT data
)

// Workloads are the workloads in table order; "setup" in a spec names the
// three setups.
func Workloads() []string {
	return []string{WorkloadDownload, WorkloadUpload, WorkloadObjects, WorkloadPage, WorkloadSetupFull, WorkloadSetupResumed, WorkloadSetup0RTT}
}

// WebSpec is the mode's own part of a spec (Spec.Settings), saved under
// "web".
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
	MaxWebObject = 1 << 20 // web.MaxObject
	MaxResources = 1000
)

// DefaultWebSpec is the h3 mode's defaults.
func DefaultWebSpec() WebSpec {
	return WebSpec{Workloads: []string{WorkloadDownload, WorkloadObjects, WorkloadPage, "setup"}, ObjectSize: 4 << 10, Resources: 20, Rounds: 5}
}

// ExpandWorkloads resolves "setup" into the three setups, in table order.
func ExpandWorkloads(ws []string) []string {
	var out []string
	for _, w := range Workloads() {
		if slices.Contains(ws, w) || (strings.HasPrefix(w, "setup-") && slices.Contains(ws, "setup")) {
			out = append(out, w)
		}
	}
	return out
}

// webSpec is the spec's WebSpec, nil where it has none.
func webSpec(s *matrix.Spec) *WebSpec {
	w, _ := s.Settings.(*WebSpec)
	return w
}

// validate checks an h3-mode spec, naming every problem.
func validate(s *matrix.Spec) []error {
	var errs []error
	if len(s.Transports) == 0 {
		errs = append(errs, errors.New("no transports"))
	}
	for _, t := range s.Transports {
		if !slices.Contains(Transports(), t) {
			errs = append(errs, fmt.Errorf("transport %q is not one of --mode h3's: %s", t, strings.Join(Transports(), ", ")))
		}
	}
	w := webSpec(s)
	if w == nil {
		return append(errs, errors.New("--mode h3 needs its web settings (workloads, object size, resources, rounds)"))
	}
	if len(w.Workloads) == 0 {
		errs = append(errs, errors.New("no workloads"))
	}
	for _, x := range w.Workloads {
		if x != "setup" && !slices.Contains(Workloads(), x) {
			errs = append(errs, fmt.Errorf("workload %q: use %s or setup", x, strings.Join(Workloads(), ", ")))
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
			if n < 1 || n > matrix.MaxConns {
				errs = append(errs, fmt.Errorf("connections %d: must be 1..%d", n, matrix.MaxConns))
			}
		}
	}
	errs = append(errs, s.CheckMTUs()...)
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
	if len(s.Drivers) > 0 && !(len(s.Drivers) == 1 && s.Drivers[0] == matrix.DriverGo) {
		errs = append(errs, errors.New("--mode h3 has the go driver only"))
	}
	errs = append(errs, s.CheckImpairments()...)
	return errs
}

// cells enumerates an h3-mode matrix: per MTU, GSO setting and
// congestion control, every workload (a download and upload per size, the
// objects per connection count) of every transport.
func cells(s *matrix.Spec) []matrix.Cell {
	w := webSpec(s)
	if w == nil {
		return nil
	}
	var out []matrix.Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, cc := range s.CCAxis() {
				for _, wl := range ExpandWorkloads(w.Workloads) {
					base := matrix.Cell{MTU: mtu, GSO: gso, Crypto: true, Streams: 1, Mode: Name, Workload: wl, Netem: s.Netem, CC: cc, Size: w.ObjectSize}
					var shapes []matrix.Cell
					switch wl {
					case WorkloadDownload, WorkloadUpload:
						base.Direction = matrix.Down
						if wl == WorkloadUpload {
							base.Direction = matrix.Up
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
						c.Streams = w.Resources
						shapes = append(shapes, c)
					default: // the setups: a 1-byte object
						c := base
						c.Size, c.Early = 1, wl == WorkloadSetup0RTT
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

// key is an h3-mode cell's key (before the common suffixes).
func key(c matrix.Cell) string {
	k := fmt.Sprintf("%s/h3/%s/size=%d/mtu=%d/gso=%s", c.Transport, c.Workload, c.Size, c.MTU, matrix.OnOff(c.GSO))
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
func WorkloadText(c matrix.Cell) string {
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

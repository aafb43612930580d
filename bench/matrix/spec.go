// Package matrix describes what a kqbench matrix measures: its Spec (the
// axes: transports, sizes, MTUs, GSO, encryption, directions, congestion
// controls, drivers, mode), the Cells it enumerates with their Keys in a
// results file, the CPU pinning (Affinity), and the checks every run makes
// of a spec before it measures. It builds on every platform.
package matrix

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"kquic.dev/bench/transport"
)

// MaxSize is the largest message size a cell may use.
const MaxSize = 16 << 20

// Spec describes a matrix.
type Spec struct {
	Transports []string      `json:"transports"`
	Sizes      []int         `json:"sizes"`
	MTUs       []int         `json:"mtus"`
	GSO        []bool        `json:"gso"`
	Crypto     []bool        `json:"crypto"`
	Directions []Direction   `json:"directions"`
	Streams    int           `json:"streams"`
	Time       time.Duration `json:"time"`
	Warmup     time.Duration `json:"warmup"`
	Repeat     int           `json:"repeat"`
	// MaxRepeat is the most samples a cell gets: a cell whose spread is
	// over MaxSpread after Repeat samples gets more rounds, up to
	// MaxRepeat (0: Repeat, no more rounds).
	MaxRepeat int `json:"max_repeat,omitempty"`
	// Affinity pins the client's and the server's streams to two CPUs
	// (nil: not pinned).
	Affinity *Affinity `json:"affinity,omitempty"`
	// Mode is what a cell measures: ModeBulk ("bulk", also when empty),
	// the goodput of streams in one direction; ModeRR ("rr"), requests
	// of ReqSize bytes each answered with a response of a message size
	// (Sizes), one at a time on each of Conns connections (bench/mode/rr); or
	// ModeStreams ("streams"), the completion times of Streams objects of
	// each size sent at once (bench/mode/streams); or ModeHandshake ("handshake"),
	// connection setups (bench/mode/handshake). Other modes register theirs
	// (RegisterModeSpec).
	Mode    Mode  `json:"mode,omitempty"`
	ReqSize int   `json:"req_size,omitempty"`
	Conns   []int `json:"conns,omitempty"`
	// Netem is the impairment of the link (a profile's name or a custom
	// spec, see topo.ParseNetem); "" for none.
	Netem string `json:"netem,omitempty"`
	// CC lists the congestion controls to compare (an axis of the
	// matrix); empty keeps every transport's default.
	CC []string `json:"cc,omitempty"`
	// Window, if positive, is the QUIC transports' flow-control window
	// (bytes, per stream and per connection); 0 keeps their defaults.
	Window int `json:"window,omitempty"`
	// UDPRcvBuf, if positive, is quic-go's UDP receive buffer (bytes).
	UDPRcvBuf int `json:"udp_rcvbuf,omitempty"`
	// ReadSize is how many bytes a receiver asks for in each read: 0, the
	// message size or 64 KiB whichever is larger (kqbench's default);
	// ReadMessage, the message size, as iperf3 -l and the module's README
	// runs read (the default beside the native driver); a positive count,
	// that many.
	ReadSize int `json:"read_size,omitempty"`
	// Drivers are what moves the bytes of each transport: "go" (this
	// process, through kquic's bindings; the default when empty) and
	// "native" (the C tools: the module's perf_test, iperf3, openssl).
	Drivers []Driver `json:"drivers,omitempty"`
	// Web is the h3 mode's workloads and their shapes (ModeH3).
	Web *WebSpec `json:"web,omitempty"`
}

// DefaultSpec is the matrix `make run` measures on this machine: about three
// minutes with the transports that run here.
func DefaultSpec() Spec {
	return Spec{
		Transports: transport.Names(),
		Sizes:      []int{1 << 10, 4 << 10, 16 << 10, 64 << 10},
		MTUs:       []int{1500, 9000},
		GSO:        []bool{true, false},
		Crypto:     []bool{true, false},
		Directions: []Direction{Up},
		Streams:    1,
		Time:       time.Second,
		Warmup:     300 * time.Millisecond,
		Repeat:     3,
		MaxRepeat:  9,
	}
}

// validateAxes checks what every mode has: the transports, the sizes (what
// they size: "message", "request") and the MTUs.
func (s *Spec) validateAxes(sized string) []error {
	var errs []error
	if len(s.Transports) == 0 {
		errs = append(errs, errors.New("no transports"))
	}
	for _, t := range s.Transports {
		if _, err := transport.Get(t); err != nil {
			errs = append(errs, err)
		}
	}
	if len(s.Sizes) == 0 {
		errs = append(errs, fmt.Errorf("no %s sizes", sized))
	}
	for _, z := range s.Sizes {
		if z <= 0 || z > MaxSize {
			errs = append(errs, fmt.Errorf("%s size %d: must be 1 byte to 16 MiB", sized, z))
		}
	}
	return append(errs, s.validateMTUs()...)
}

// validateMTUs checks the MTU axis, which every mode has.
func (s *Spec) validateMTUs() []error {
	var errs []error
	if len(s.MTUs) == 0 {
		errs = append(errs, errors.New("no MTUs"))
	}
	for _, m := range s.MTUs {
		if m < 1280 || m > 65535 {
			errs = append(errs, fmt.Errorf("MTU %d: must be 1280..65535 (QUIC needs 1200-byte packets, IPv6 1280)", m))
		}
	}
	return errs
}

// Validate checks the spec with its mode's checks (ModeSpecOf), naming
// every problem.
func (s *Spec) Validate() error {
	ms, err := ModeSpecOf(s.Mode)
	if err != nil {
		return err
	}
	return errors.Join(ms.validate(s)...)
}

// validateBulk checks a spec of goodput-shaped cells (bulk, streams, and rr
// with its own checks added), naming every problem.
func (s *Spec) validateBulk() []error {
	var errs []error
	errs = append(errs, s.validateAxes("message")...)
	if len(s.GSO) == 0 || len(s.Crypto) == 0 {
		errs = append(errs, errors.New("--gso and --crypto need at least one of on, off"))
	}
	if len(s.Directions) == 0 && s.Mode != ModeRR {
		errs = append(errs, errors.New("no directions"))
	}
	for _, d := range s.Directions {
		if d != "up" && d != "down" {
			errs = append(errs, fmt.Errorf("direction %q: use up or down", d))
		}
	}
	if s.Streams < 1 || s.Streams > 1000 {
		errs = append(errs, fmt.Errorf("streams %d: must be 1..1000", s.Streams))
	}
	if s.Time <= 0 {
		errs = append(errs, fmt.Errorf("time %v: must be positive", s.Time))
	}
	if s.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %v: must not be negative", s.Warmup))
	}
	for _, d := range s.Drivers {
		if d != DriverGo && d != DriverNative {
			errs = append(errs, fmt.Errorf("driver %q: use go or native", d))
		}
		if d == DriverNative && s.Mode != "" && s.Mode != ModeBulk {
			errs = append(errs, fmt.Errorf("driver native measures goodput (bulk mode), not --mode %s", s.Mode))
		}
	}
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	if s.ReadSize < ReadMessage || s.ReadSize > MaxSize {
		errs = append(errs, fmt.Errorf("read size %d: use msg (the message size), or 1 byte to 16 MiB", s.ReadSize))
	}
	if s.MaxRepeat != 0 && s.MaxRepeat < s.Repeat {
		errs = append(errs, fmt.Errorf("max-repeat %d: must be 0 (no more rounds) or at least repeat (%d)", s.MaxRepeat, s.Repeat))
	}
	errs = append(errs, s.validateImpairments()...)
	return errs
}

// MaxSamples is the most samples a cell gets.
func (s *Spec) MaxSamples() int {
	return max(s.Repeat, s.MaxRepeat)
}

// RepeatText says how many samples a cell's median is of: "3", or "3-9"
// when wide cells get more.
func (s *Spec) RepeatText() string {
	if m := s.MaxSamples(); m > s.Repeat {
		return fmt.Sprintf("%d-%d", s.Repeat, m)
	}
	return strconv.Itoa(s.Repeat)
}

// ParseOnOff parses "on,off"-style lists.
func ParseOnOff(list []string) ([]bool, error) {
	var out []bool
	for _, v := range list {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "on", "true", "yes", "1":
			out = append(out, true)
		case "off", "false", "no", "0":
			out = append(out, false)
		default:
			return nil, fmt.Errorf("%q: use on or off", v)
		}
	}
	return out, nil
}

// ReadMessage is Spec.ReadSize for reads of the message size.
const ReadMessage = -1

// ReadSizeOf is the bytes a receiver of size-byte messages asks for in
// each read (transport.Options.ReadSize: 0 for the default).
func (s *Spec) ReadSizeOf(size int) int {
	if s.ReadSize == ReadMessage {
		return size
	}
	return max(s.ReadSize, 0)
}

// ReadSizeText says how the receivers read, for a table's notes ("" for
// the default).
func (s *Spec) ReadSizeText() string {
	switch {
	case s.ReadSize == ReadMessage:
		return "receivers read the message size at a time (--read-size msg), as iperf3 -l and the module's README runs do"
	case s.ReadSize > 0:
		return fmt.Sprintf("receivers read %d bytes at a time (--read-size)", s.ReadSize)
	}
	return ""
}

// Package matrix describes what a kqbench matrix measures: its Spec (the
// axes: transports, sizes, MTUs, GSO, encryption, directions, congestion
// controls, drivers, mode), the Cells it enumerates with their Keys in a
// results file, the CPU pinning (Affinity), and the checks every run makes
// of a spec before it measures. It builds on every platform.
package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"kquic.dev/bench/transport"
	"kquic.dev/internal/jsonobj"
)

// MaxSize is the largest message size a cell may use.
const MaxSize = 16 << 20

// MaxConns is the most connections a cell may use (Spec.Conns).
const MaxConns = 1000

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
	// Mode is what a cell measures: a registered mode (bench/mode/...), ""
	// for the default one. ReqSize is the size of a request, and Conns the
	// connection counts, of a mode whose cells send requests on several
	// connections.
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
	// runs read (the default beside a driver whose tools read so,
	// DriverSpec.ReadMessage); a positive count, that many.
	ReadSize int `json:"read_size,omitempty"`
	// Drivers are what moves the bytes of each transport: "go" (this
	// process, through kquic's bindings; the default when empty) and the
	// registered drivers (RegisterDriver: the module's C tools).
	Drivers []Driver `json:"drivers,omitempty"`
	// Send lists the send methods to compare (an axis of a mode that has
	// it: bulk's --send); empty is the transports' own write alone.
	Send []string `json:"send,omitempty"`
	// Settings is the mode's own part of the spec (ModeSpec.Settings),
	// saved under its key.
	Settings any `json:"-"`
	// others are the fields of the file that no registered type has, kept
	// as read.
	others []jsonobj.Field
}

// MarshalJSON encodes the spec with its mode's settings last.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	var parts []jsonobj.Part
	if s.Settings != nil {
		ms, err := ModeSpecOf(s.Mode)
		if err != nil || ms.Settings == nil {
			return nil, fmt.Errorf("matrix: settings of mode %q, which has none", s.Mode)
		}
		parts = append(parts, jsonobj.Part{Key: ms.Settings.Key, Value: s.Settings})
	}
	for _, f := range s.others {
		parts = append(parts, jsonobj.Part{Key: f.Key, Value: f.Value})
	}
	return jsonobj.Marshal(plain(s), parts...)
}

// UnmarshalJSON decodes a spec and its mode's settings.
func (s *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	rest, err := jsonobj.Unmarshal(b, (*plain)(s))
	if err != nil {
		return err
	}
	s.Settings, s.others = nil, nil
	var st *SettingsType
	if ms, err := ModeSpecOf(s.Mode); err == nil {
		st = ms.Settings
	}
	for _, f := range rest {
		if st == nil || f.Key != st.Key || s.Settings != nil || string(f.Value) == "null" {
			s.others = append(s.others, f)
			continue
		}
		v := st.New()
		if err := json.Unmarshal(f.Value, v); err != nil {
			return fmt.Errorf("spec: %s: %w", f.Key, err)
		}
		s.Settings = v
	}
	return nil
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

// CheckAxes checks what every mode has: the transports, the sizes (what
// they size: "message", "request") and the MTUs.
func (s *Spec) CheckAxes(sized string) []error {
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
	return append(errs, s.CheckMTUs()...)
}

// CheckMTUs checks the MTU axis, which every mode has.
func (s *Spec) CheckMTUs() []error {
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

// DefaultChecks are the checks of a spec of goodput-shaped cells (the
// default mode's), naming every problem: CheckCommon and CheckDirections.
func (s *Spec) DefaultChecks() []error {
	return append(s.CheckCommon(), s.CheckDirections()...)
}

// CheckDirections checks the directions: at least one, each up or down.
func (s *Spec) CheckDirections() []error {
	var errs []error
	if len(s.Directions) == 0 {
		errs = append(errs, errors.New("no directions"))
	}
	for _, d := range s.Directions {
		if d != Up && d != Down {
			errs = append(errs, fmt.Errorf("direction %q: use up or down", d))
		}
	}
	return errs
}

// CheckCommon checks the axes and settings of a spec of goodput-shaped
// cells but the directions, naming every problem.
func (s *Spec) CheckCommon() []error {
	var errs []error
	errs = append(errs, s.CheckAxes("message")...)
	if len(s.GSO) == 0 || len(s.Crypto) == 0 {
		errs = append(errs, errors.New("--gso and --crypto need at least one of on, off"))
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
	errs = append(errs, s.checkDrivers()...)
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	if s.ReadSize < ReadMessage || s.ReadSize > MaxSize {
		errs = append(errs, fmt.Errorf("read size %d: use msg (the message size), or 1 byte to 16 MiB", s.ReadSize))
	}
	if s.MaxRepeat != 0 && s.MaxRepeat < s.Repeat {
		errs = append(errs, fmt.Errorf("max-repeat %d: must be 0 (no more rounds) or at least repeat (%d)", s.MaxRepeat, s.Repeat))
	}
	errs = append(errs, s.CheckImpairments()...)
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

//go:build linux

package bench

import (
	"errors"
	"fmt"
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
	Directions []string      `json:"directions"` // "up": client to server; "down": server to client
	Streams    int           `json:"streams"`
	Time       time.Duration `json:"time"`
	Warmup     time.Duration `json:"warmup"`
	Repeat     int           `json:"repeat"`
	// Mode is what a cell measures: ModeBulk ("" reads as it), the goodput
	// of streams, or ModeHandshake, connection setups (see
	// measureHandshakes).
	Mode string `json:"mode,omitempty"`
}

// Modes of a matrix (Spec.Mode).
const (
	ModeBulk      = "bulk"
	ModeHandshake = "handshake"
)

// DefaultSpec is the matrix `make run` measures on this machine: about two
// minutes with the transports that run here.
func DefaultSpec() Spec {
	return Spec{
		Transports: transport.Names(),
		Sizes:      []int{1 << 10, 4 << 10, 16 << 10, 64 << 10},
		MTUs:       []int{1500, 9000},
		GSO:        []bool{true, false},
		Crypto:     []bool{true, false},
		Directions: []string{"up"},
		Streams:    1,
		Time:       time.Second,
		Warmup:     300 * time.Millisecond,
		Repeat:     3,
	}
}

// Validate checks the spec, naming every problem.
func (s *Spec) Validate() error {
	var errs []error
	switch s.Mode {
	case "", ModeBulk:
	case ModeHandshake:
		return s.validateHandshake()
	default:
		errs = append(errs, fmt.Errorf("mode %q: use %s or %s", s.Mode, ModeBulk, ModeHandshake))
	}
	if len(s.Transports) == 0 {
		errs = append(errs, errors.New("no transports"))
	}
	for _, t := range s.Transports {
		if _, err := transport.Get(t); err != nil {
			errs = append(errs, err)
		}
	}
	if len(s.Sizes) == 0 {
		errs = append(errs, errors.New("no message sizes"))
	}
	for _, z := range s.Sizes {
		if z <= 0 || z > MaxSize {
			errs = append(errs, fmt.Errorf("message size %d: must be 1 byte to 16 MiB", z))
		}
	}
	if len(s.MTUs) == 0 {
		errs = append(errs, errors.New("no MTUs"))
	}
	for _, m := range s.MTUs {
		if m < 1280 || m > 65535 {
			errs = append(errs, fmt.Errorf("MTU %d: must be 1280..65535 (QUIC needs 1200-byte packets, IPv6 1280)", m))
		}
	}
	if len(s.GSO) == 0 || len(s.Crypto) == 0 {
		errs = append(errs, errors.New("--gso and --crypto need at least one of on, off"))
	}
	if len(s.Directions) == 0 {
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
	if s.Repeat < 1 {
		errs = append(errs, fmt.Errorf("repeat %d: must be at least 1", s.Repeat))
	}
	return errors.Join(errs...)
}

// Cell is one point of the matrix.
type Cell struct {
	Transport string `json:"transport"`
	Size      int    `json:"size"`
	MTU       int    `json:"mtu"`
	GSO       bool   `json:"gso"`
	Crypto    bool   `json:"crypto"`
	Direction string `json:"direction"`
	Streams   int    `json:"streams"`
	// Early marks a handshake-mode cell whose connections resume a session
	// and send their request as 0-RTT data.
	Early bool `json:"early,omitempty"`
}

// Key identifies the cell in a results document.
func (c Cell) Key() string {
	if c.Early {
		return fmt.Sprintf("%s/size=%d/mtu=%d/gso=%s/crypto=%s/%s/streams=%d/0rtt",
			c.Transport, c.Size, c.MTU, onOff(c.GSO), onOff(c.Crypto), c.Direction, c.Streams)
	}
	return fmt.Sprintf("%s/size=%d/mtu=%d/gso=%s/crypto=%s/%s/streams=%d",
		c.Transport, c.Size, c.MTU, onOff(c.GSO), onOff(c.Crypto), c.Direction, c.Streams)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Cells enumerates the matrix, grouped by topology settings (MTU, GSO) so
// that the devices change as rarely as possible.
func (s *Spec) Cells() []Cell {
	if s.Mode == ModeHandshake {
		return s.handshakeCells()
	}
	var out []Cell
	for _, mtu := range s.MTUs {
		for _, gso := range s.GSO {
			for _, dir := range s.Directions {
				for _, crypto := range s.Crypto {
					for _, size := range s.Sizes {
						for _, t := range s.Transports {
							out = append(out, Cell{Transport: t, Size: size, MTU: mtu, GSO: gso, Crypto: crypto, Direction: dir, Streams: s.Streams})
						}
					}
				}
			}
		}
	}
	return out
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

package matrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Mode is what a matrix's cells measure (Spec.Mode, Cell.Mode). Its JSON
// form is the name, as results files have always spelled it.
type Mode string

// The modes.
const (
	ModeBulk = Mode("bulk") // streams in one direction, goodput (the default, also when empty)
	ModeRR   = Mode("rr")   // request/response: round trips, latency percentiles
	// ModeStreams measures per-stream completion times: each sample sends
	// Streams objects of Size bytes at once, client to server, and times
	// each until the server has all of it, hash-checked. The QUIC
	// transports carry each object on its own stream; TCP and kTLS carry
	// them either multiplexed over one connection in frames, taking turns
	// as HTTP/2's streams of equal weight do (Cell.Mux), so a lost segment
	// holds every stream behind it (head-of-line blocking), or on a
	// connection each (the second baseline).
	ModeStreams = Mode("streams")
	// ModeHandshake measures connection setups.
	ModeHandshake = Mode("handshake")
)

// Direction is which way a cell's bytes go (Spec.Directions,
// Cell.Direction).
type Direction string

// The directions. An rr-mode cell's Direction is DirectionRR: both ways, a
// request and its response.
const (
	Up          = Direction("up")   // client to server
	Down        = Direction("down") // server to client
	DirectionRR = Direction(ModeRR)
)

// Driver is what moves a cell's bytes (Spec.Drivers, Cell.Driver).
type Driver string

// The drivers.
const (
	// DriverGo measures this process's transports, through the Go
	// bindings (the default; a Cell records it as "").
	DriverGo = Driver("go")
	// DriverNative measures C tools between the same two namespaces: the
	// module's perf_test for kquic, iperf3 for tcp, openssl s_server and
	// s_client -ktls for ktls.
	DriverNative = Driver("native")
)

// A ModeSpec is the spec side of a mode: the checks of a spec in that mode
// and the cells it enumerates. The built-in modes' are here, so that every
// system validates and plans them; a mode of the engine adds its own with
// RegisterModeSpec (bench/mode.Register does).
type ModeSpec struct {
	// Validate checks a spec of the mode, naming every problem (nil: the
	// bulk mode's checks).
	Validate func(*Spec) []error
	// Cells enumerates the mode's cells (nil: the bulk mode's).
	Cells func(*Spec) []Cell
}

func (m ModeSpec) validate(s *Spec) []error {
	if m.Validate == nil {
		return s.validateBulk()
	}
	return m.Validate(s)
}

func (m ModeSpec) cells(s *Spec) []Cell {
	if m.Cells == nil {
		return s.bulkCells()
	}
	return m.Cells(s)
}

var (
	modeMu    sync.RWMutex
	modeSpecs = map[Mode]ModeSpec{
		ModeBulk:      {},
		ModeRR:        {Validate: (*Spec).validateRR, Cells: (*Spec).rrCells},
		ModeStreams:   {},
		ModeHandshake: {Validate: (*Spec).validateHandshake, Cells: (*Spec).handshakeCells},
	}
	// modeOrder is the order modes are listed in: the built-in ones,
	// then the registered ones as they came.
	modeOrder = []Mode{ModeBulk, ModeRR, ModeStreams, ModeHandshake}
)

// RegisterModeSpec adds a mode's spec side. A name registered already is
// an error.
func RegisterModeSpec(name Mode, ms ModeSpec) error {
	if name == "" {
		return errors.New("matrix: a mode needs a name")
	}
	modeMu.Lock()
	defer modeMu.Unlock()
	if _, ok := modeSpecs[name]; ok {
		return fmt.Errorf("matrix: mode %q is registered already", name)
	}
	modeSpecs[name] = ms
	modeOrder = append(modeOrder, name)
	return nil
}

// ModeSpecOf is the spec side of the mode ("" is bulk); an error naming the
// modes there are for one that is not registered.
func ModeSpecOf(name Mode) (ModeSpec, error) {
	if name == "" {
		name = ModeBulk
	}
	modeMu.RLock()
	defer modeMu.RUnlock()
	ms, ok := modeSpecs[name]
	if !ok {
		names := make([]string, len(modeOrder))
		for i, m := range modeOrder {
			names[i] = string(m)
		}
		return ModeSpec{}, fmt.Errorf("mode %q: use %s", name, strings.Join(names, ", "))
	}
	return ms, nil
}

// Modes lists the modes whose spec side is registered, the built-in ones
// first.
func Modes() []Mode {
	modeMu.RLock()
	defer modeMu.RUnlock()
	return slices.Clone(modeOrder)
}

package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"kquic.dev/internal/jsonobj"
)

// A Payload is a mode's own figures in a results file, beside those every
// cell has: a sample's (Sample.Payload: a request/response mode's round
// trips, ...) or a cell's summary of them (CellResult.Payload). Its type
// is registered (RegisterPayload) under the key it is saved at, so that a
// file reads back into the mode's types; a field no registered type has is
// kept as it was read, and saved again the same.
type Payload interface {
	// PayloadKey is the JSON key the payload is saved under (its mode's
	// name, for most).
	PayloadKey() string
}

// A PayloadType is what the results know of a mode's payloads of one key:
// how they decode, where they are saved, and what a cell's summary and
// compare make of them.
type PayloadType struct {
	// Key is the JSON key of the payloads, in a sample and in a cell.
	Key string
	// Sample and Cell make an empty payload of a sample and of a cell's
	// summary to decode into (nil: the key has none at that level).
	Sample, Cell func() Payload
	// CellAfter is the field of a cell its summary is saved after ("": at
	// the end), where files written before have it; a sample's payload is
	// its last field.
	CellAfter string
	// Summarize sums a cell's samples up into its Payload, after the
	// cell's goodput figures were set from the samples' (it may change
	// them: a mode whose samples carry no goodput clears them). Nil: the
	// goodput figures alone.
	Summarize func(r *CellResult)
	// Metric names the figure compare sets side by side in place of the
	// goodput in Mbit/s, and gives a sample's value of it; nil: the
	// goodput. Unit heads compare's columns ("": Mbit/s).
	Metric func(sample Payload) (name string, value float64)
	Unit   string
	// Figures are more figures compare sets side by side, each sample one
	// value (the rr mode's requests per second and round-trip
	// percentiles), saved under Key in a cell's comparison.
	Figures []Figure
	// Plotted reports whether a cell whose summary is the payload has its
	// goodput as its figure of merit, which the plots draw against the
	// message size (nil: it has).
	Plotted func(cell Payload) bool
	// Named are figures of a sample a user names (kqbench ab --metric
	// rps).
	Named []NamedFigure
}

// A NamedFigure is a figure of a mode's samples by the name a user gives
// it (kqbench ab --metric): its unit, what it is (for a help text), and
// whether lower is better.
type NamedFigure struct {
	Name, Unit, About string
	LowerBetter       bool
	Value             func(sample Payload) float64
}

// A Figure is one figure of a sample's payload that compare sets side by
// side.
type Figure struct {
	Name  string
	Value func(sample Payload) float64
}

var (
	payloadMu    sync.RWMutex
	payloadTypes = map[string]*PayloadType{}
)

// RegisterPayload adds the payloads of one key. A key registered twice
// panics: it is a program's error, found at start.
func RegisterPayload(t PayloadType) {
	payloadMu.Lock()
	defer payloadMu.Unlock()
	if t.Key == "" {
		panic("results: a payload type needs a key")
	}
	if _, ok := payloadTypes[t.Key]; ok {
		panic(fmt.Sprintf("results: payload %q registered twice", t.Key))
	}
	payloadTypes[t.Key] = &t
}

// PayloadTypeOf is the registered type of payloads of key k.
func PayloadTypeOf(k string) (*PayloadType, bool) {
	payloadMu.RLock()
	defer payloadMu.RUnlock()
	t, ok := payloadTypes[k]
	return t, ok
}

// A KeyedFigure is a named figure with the key of the payloads it reads.
type KeyedFigure struct {
	NamedFigure
	Key string
}

// NamedFigures are the registered named figures, by name.
func NamedFigures() []KeyedFigure {
	payloadMu.RLock()
	defer payloadMu.RUnlock()
	var out []KeyedFigure
	for k, t := range payloadTypes {
		for _, f := range t.Named {
			out = append(out, KeyedFigure{f, k})
		}
	}
	slices.SortFunc(out, func(a, b KeyedFigure) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// GoodputIsFigure reports whether the sample's goodput is its figure:
// true but for a sample whose payload's type compares another (its Metric)
// or figures of its own (its Figures).
func (s *Sample) GoodputIsFigure() bool {
	t := typeOf(s.Payload)
	return t == nil || (t.Metric == nil && len(t.Figures) == 0)
}

// typeOf is the registered type of p, or nil.
func typeOf(p Payload) *PayloadType {
	if p == nil {
		return nil
	}
	t, _ := PayloadTypeOf(p.PayloadKey())
	return t
}

// decodeParts sorts the fields of an object that its struct does not know
// into the payload of a registered key (new makes it: the type's Sample or
// Cell) and the others, kept as read.
func decodeParts(fs []jsonobj.Field, level func(*PayloadType) func() Payload) (Payload, []jsonobj.Field, error) {
	var p Payload
	var rest []jsonobj.Field
	for _, f := range fs {
		t, ok := PayloadTypeOf(f.Key)
		if !ok || level(t) == nil || p != nil || string(f.Value) == "null" {
			rest = append(rest, f)
			continue
		}
		v := level(t)()
		if err := json.Unmarshal(f.Value, v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.Key, err)
		}
		p = v
	}
	return p, rest, nil
}

// encodeParts are a struct's parts: its payload (after the field after)
// and the fields it kept as read.
func encodeParts(p Payload, after string, rest []jsonobj.Field) []jsonobj.Part {
	var parts []jsonobj.Part
	if p != nil {
		parts = append(parts, jsonobj.Part{Key: p.PayloadKey(), Value: p, After: after})
	}
	for _, f := range rest {
		parts = append(parts, jsonobj.Part{Key: f.Key, Value: f.Value})
	}
	return parts
}

// MarshalJSON encodes the sample with its payload last.
func (s Sample) MarshalJSON() ([]byte, error) {
	type plain Sample
	return jsonobj.Marshal(plain(s), encodeParts(s.Payload, "", s.others)...)
}

// UnmarshalJSON decodes a sample and its payload.
func (s *Sample) UnmarshalJSON(b []byte) error {
	type plain Sample
	rest, err := jsonobj.Unmarshal(b, (*plain)(s))
	if err != nil {
		return err
	}
	s.Payload, s.others, err = decodeParts(rest, func(t *PayloadType) func() Payload { return t.Sample })
	return err
}

// MarshalJSON encodes the cell with its summary's payload where its type
// saves it.
func (r CellResult) MarshalJSON() ([]byte, error) {
	type plain CellResult
	after := ""
	if t := typeOf(r.Payload); t != nil {
		after = t.CellAfter
	}
	return jsonobj.Marshal(plain(r), encodeParts(r.Payload, after, r.others)...)
}

// UnmarshalJSON decodes a cell and its summary's payload.
func (r *CellResult) UnmarshalJSON(b []byte) error {
	type plain CellResult
	rest, err := jsonobj.Unmarshal(b, (*plain)(r))
	if err != nil {
		return err
	}
	r.Payload, r.others, err = decodeParts(rest, func(t *PayloadType) func() Payload { return t.Cell })
	return err
}

// Plotted reports whether the cell's figure of merit is its goodput, which
// the plots draw against the message size: true but for a cell whose
// summary says otherwise (a page load's time).
func (r *CellResult) Plotted() bool {
	if t := typeOf(r.Payload); t != nil && t.Plotted != nil {
		return t.Plotted(r.Payload)
	}
	return true
}

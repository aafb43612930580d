package fuzz

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Kinds of input.
const (
	// KindFrames is a 1-RTT packet's plaintext payload, sent on an
	// established connection under its keys.
	KindFrames = "1rtt"
	// KindInitial is a whole datagram of Initial packets, protected with
	// the keys of its own destination connection ID, sent from a fresh
	// socket before any handshake.
	KindInitial = "initial"
)

// Input is one generated input, as logged.
type Input struct {
	// Seq numbers the inputs of a run from 0.
	Seq int `json:"seq"`
	// Kind is KindFrames or KindInitial.
	Kind string `json:"kind"`
	// Payload is the 1-RTT plaintext, or the Initial datagram.
	Payload []byte `json:"payload"`
	// Reserved, if set, is written to the packet's reserved bits.
	Reserved byte `json:"reserved,omitempty"`
	// What says how the generator made it ("frames: ACK, STREAM",
	// "mutated: flip").
	What string `json:"what"`
	// Mark, in tests of the oracles, is what the fuzzer does before it
	// sends the input ([Act]).
	Mark string `json:"mark,omitempty"`
}

// Log appends inputs to a file as JSON lines, synced so that a guest that
// dies leaves every input it sent on the host.
type Log struct {
	f   *os.File
	enc *json.Encoder
}

// CreateLog creates (truncates) the log at path.
func CreateLog(path string) (*Log, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("fuzz: input log: %w", err)
	}
	return &Log{f: f, enc: json.NewEncoder(f)}, nil
}

// Write logs one input and syncs the file.
func (l *Log) Write(in Input) error {
	if err := l.enc.Encode(in); err != nil {
		return fmt.Errorf("fuzz: input log: %w", err)
	}
	return l.f.Sync()
}

// Close closes the log.
func (l *Log) Close() error { return l.f.Close() }

// ReadLog reads the inputs of a log. A last line cut short (the guest died
// as it wrote it) is left out.
func ReadLog(path string) ([]Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fuzz: %w", err)
	}
	defer f.Close()
	return readInputs(f)
}

func readInputs(r io.Reader) ([]Input, error) {
	var out []Input
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		var in Input
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			continue // a line cut short
		}
		if in.Kind != KindFrames && in.Kind != KindInitial {
			return nil, fmt.Errorf("fuzz: input %d: kind %q", in.Seq, in.Kind)
		}
		out = append(out, in)
	}
	return out, sc.Err()
}

// writeInputs writes inputs as a log at path.
func writeInputs(path string, inputs []Input) error {
	l, err := CreateLog(path)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		if err := l.Write(in); err != nil {
			l.Close()
			return err
		}
	}
	return l.Close()
}

// Package results is the kqbench results file (schema kqbench.matrix/v1):
// the Document a matrix run writes, each cell's CellResult with every raw
// Sample, the summaries (median, the median's distribution-free interval
// and spread; each mode's own as a registered payload, payload.go), the
// environment it was measured
// in, loading and atomic saving, and Compare, which sets two runs side by
// side as benchstat does. It builds on every platform: reading, comparing
// and plotting results needs none of the Linux engine that measures them.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"kquic.dev/bench/matrix"
	"kquic.dev/internal/jsonobj"
)

// SchemaVersion names the format of the results document. Two-host mode
// added optional fields (environment.peer, cells[].peer_offloads,
// samples[].server_cpu) without changing it: documents without them read as
// before, and older readers ignore them.
const SchemaVersion = "kqbench.matrix/v1"

// Document is the results of a matrix run, as written to JSON.
type Document struct {
	Schema string `json:"schema"`
	// Label names the run for comparisons (kqbench matrix --label
	// before/after: a side of an A/B across reboots).
	Label    string       `json:"label,omitempty"`
	Started  time.Time    `json:"started"`
	Updated  time.Time    `json:"updated"`
	Command  []string     `json:"command"`
	Env      Environment  `json:"environment"`
	Spec     matrix.Spec  `json:"spec"`
	Cells    []CellResult `json:"cells"`
	Complete bool         `json:"complete"`
}

// Status is a cell's outcome. Its JSON form is the word, as results files
// have always spelled it.
type Status string

// The statuses of a cell.
const (
	StatusOK          = Status("ok")          // measured
	StatusNA          = Status("n/a")         // the options do not apply to the transport
	StatusUnavailable = Status("unavailable") // the transport cannot run here
	StatusFailed      = Status("failed")      // it ran and failed; Error says why
)

// CellResult is one cell's outcome with every raw sample.
type CellResult struct {
	matrix.Cell
	Key     string   `json:"key"`
	Status  Status   `json:"status"`
	Note    string   `json:"note,omitempty"`
	Error   string   `json:"error,omitempty"`
	Samples []Sample `json:"samples,omitempty"`
	// Disturbed are samples set aside because the hypervisor took more
	// than MaxSteal of the CPUs during them, each taken again once; they
	// are not in the summary.
	Disturbed []Sample `json:"disturbed,omitempty"`
	// Summary over the samples (goodput in bit/s).
	MedianBps float64 `json:"median_bps,omitempty"`
	MinBps    float64 `json:"min_bps,omitempty"`
	MaxBps    float64 `json:"max_bps,omitempty"`
	// LowBps and HighBps are the median's confidence interval at
	// SpreadConfidence (the range up to four samples); Spread is its width
	// over the median, and WideSpread flags one over MaxSpread.
	LowBps     float64 `json:"interval_low_bps,omitempty"`
	HighBps    float64 `json:"interval_high_bps,omitempty"`
	Spread     float64 `json:"spread,omitempty"`
	WideSpread bool    `json:"wide_spread,omitempty"`
	// Offloads is the device state the cell ran with, and GSONote what
	// GSO on or off meant for this transport.
	Offloads string `json:"offloads,omitempty"`
	GSONote  string `json:"gso_note,omitempty"`
	// PeerOffloads is the server's device state in two-host mode.
	PeerOffloads string `json:"peer_offloads,omitempty"`
	// Profile is the cell's folded stacks (kqbench matrix --profile: perf
	// record -a -g over every sample's window, merged) and ProfileSVG its
	// flamegraph, both relative to the results file's directory;
	// ProfileNote says how they were recorded, or why they are missing.
	Profile     string `json:"profile,omitempty"`
	ProfileSVG  string `json:"profile_svg,omitempty"`
	ProfileNote string `json:"profile_note,omitempty"`
	// Payload is the cell's mode's summary of its samples' payloads
	// (PayloadType.Summarize), saved where its type says.
	Payload Payload `json:"-"`
	// others are the fields of the file that no registered type has, kept
	// as read.
	others []jsonobj.Field
}

// Sample is one measured repeat of a cell.
type Sample struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Bps     float64 `json:"bps"`
	CPU     CPU     `json:"cpu"`
	// ServerCPU is the server host's CPU in two-host mode (CPU is then the
	// client host's); in single-host mode CPU covers both ends.
	ServerCPU *CPU `json:"server_cpu,omitempty"`
	// Ends is the time of the CPUs the two ends were pinned to (Spec.Affinity;
	// in two-host mode the client's only).
	Ends     *EndsCPU  `json:"ends_cpu,omitempty"`
	Streams  int       `json:"streams"`
	Warmup   float64   `json:"warmup_seconds"`
	Finished time.Time `json:"finished"`
	// CPUUnavailable says why CPU (or, in two-host mode, ServerCPU) is
	// missing: the CPU counters could not be read over the window. Absent
	// in files written before it: their CPU was then zero without a word.
	CPUUnavailable string `json:"cpu_unavailable,omitempty"`
	// CyclesUnavailable says why CPU.CyclesPerByte is missing.
	CyclesUnavailable string `json:"cycles_unavailable,omitempty"`
	// Tool is the program that measured a sample of a driver other than
	// this process's (the native driver's perf_test, iperf3, ...); "" for
	// this process's.
	Tool string `json:"tool,omitempty"`
	// Counters holds the --explain and --capture figures over the measured
	// window ("client.tx_packets", "server.syscall.recvmsg",
	// "capture.c2s.packets", ...), and CountersMissing those that could
	// not be had, with the reason.
	Counters        map[string]float64 `json:"counters,omitempty"`
	CountersMissing []string           `json:"counters_missing,omitempty"`
	// Payload is the sample's figures of its mode beside the common ones
	// (a registered type, saved under its key).
	Payload Payload `json:"-"`
	// others are the fields of the file that no registered type has, kept
	// as read.
	others []jsonobj.Field
}

// Summarize computes the median, extremes and spread of the samples (after
// samples were added, as when rounds are merged).
func (r *CellResult) Summarize() { r.summarize() }

func (r *CellResult) summarize() {
	if len(r.Samples) == 0 {
		return
	}
	v := make([]float64, len(r.Samples))
	for i, s := range r.Samples {
		v[i] = s.Bps
	}
	sp := SpreadOf(v)
	r.MedianBps, r.MinBps, r.MaxBps = sp.Median, sp.Min, sp.Max
	r.LowBps, r.HighBps, r.Spread, r.WideSpread = sp.Lo, sp.Hi, sp.Width, sp.Wide
	if _, t := firstPayload(r.Samples); t != nil && t.Summarize != nil {
		t.Summarize(r)
	}
}

// Lookup returns the result of a cell, if the document has it.
func (d *Document) Lookup(c matrix.Cell) (*CellResult, bool) {
	k := c.Key()
	for i := range d.Cells {
		if d.Cells[i].Key == k {
			return &d.Cells[i], true
		}
	}
	return nil, false
}

// Put adds or replaces a cell's result.
func (d *Document) Put(r CellResult) {
	for i := range d.Cells {
		if d.Cells[i].Key == r.Key {
			d.Cells[i] = r
			return
		}
	}
	d.Cells = append(d.Cells, r)
}

// Save writes the document atomically: a reader sees the old file or the
// new one, never a part.
func (d *Document) Save(path string) error {
	d.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Load reads a results document, checking its schema.
func Load(path string) (*Document, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s is not a kqbench results document: %w", path, err)
	}
	if d.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s has schema %q; this kqbench reads %q", path, d.Schema, SchemaVersion)
	}
	return &d, nil
}

// LookupKey returns the result of the cell with key k, if the document has it.
func (d *Document) LookupKey(k string) (*CellResult, bool) {
	for i := range d.Cells {
		if d.Cells[i].Key == k {
			return &d.Cells[i], true
		}
	}
	return nil, false
}

// Tool is the program that measured the document's cells of a transport
// by a driver other than this process's (Sample.Tool), or "" when none
// says.
func (d *Document) Tool(transport string, driver matrix.Driver) string {
	for _, c := range d.Cells {
		if c.Cell.Transport != transport || c.Cell.Driver != driver {
			continue
		}
		for _, s := range c.Samples {
			if s.Tool != "" {
				return s.Tool
			}
		}
	}
	return ""
}

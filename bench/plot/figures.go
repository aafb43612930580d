package plot

import (
	"fmt"
	"sort"
	"sync"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// slice is the cells of one direction, stream count and workload (of a
// mode that has several; "" in the others): one figure's worth.
type slice struct {
	dir      matrix.Direction
	streams  int
	conns    int // connections side by side (Cell.Conns)
	workload string
	cells    []results.CellResult
}

// splitCells splits a document's measured cells by direction, stream
// count and workload. Cells whose figure of merit is not their goodput
// (results.CellResult.Plotted: requests per second, times) are left to the
// tables.
func splitCells(d *results.Document) []slice {
	idx := map[string]int{}
	var out []slice
	for _, c := range d.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		if !c.Plotted() {
			continue // a figure of merit other than the goodput: the tables'
		}
		conns := 0
		if c.Mode.IsDefault() {
			conns = c.Conns // the default mode's connections side by side; another mode's cells draw as they did
		}
		k := fmt.Sprintf("%s/%d/%s/%d", c.Direction, c.Streams, c.Workload, conns)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, slice{dir: c.Direction, streams: c.Streams, workload: c.Workload, conns: conns})
		}
		out[i].cells = append(out[i].cells, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].dir != out[j].dir {
			return out[i].dir > out[j].dir // up first
		}
		if out[i].workload != out[j].workload {
			return out[i].workload < out[j].workload
		}
		if out[i].streams != out[j].streams {
			return out[i].streams < out[j].streams
		}
		return out[i].conns < out[j].conns
	})
	return out
}

// suffix names a slice in file names and titles; the stream count only
// where the document has more than one.
func (s slice) suffix(all []slice) (name, words string) {
	name, words = string(s.dir), dirWords(s.dir)
	if s.workload != "" {
		return s.workload, s.workload + ", " + words
	}
	for _, o := range all {
		if o.dir == s.dir && o.streams != s.streams {
			name += fmt.Sprintf("-streams%d", s.streams)
			words += fmt.Sprintf(", %d streams", s.streams)
			break
		}
	}
	for _, o := range all {
		if o.dir == s.dir && o.conns != s.conns {
			name += fmt.Sprintf("-conns%d", max(s.conns, 1))
			words += fmt.Sprintf(", %d connection(s)", max(s.conns, 1))
			break
		}
	}
	return name, words
}

func dirWords(dir matrix.Direction) string {
	if dir == "down" {
		return "server to client"
	}
	return "client to server"
}

func (s slice) plain() []matrix.Cell {
	out := make([]matrix.Cell, len(s.cells))
	for i, c := range s.cells {
		out[i] = c.Cell
	}
	return out
}

func (s slice) lookup(c matrix.Cell) results.CellResult {
	k := c.Key()
	for _, r := range s.cells {
		if r.Key == k {
			return r
		}
	}
	return results.CellResult{}
}

// Goodput is, per direction, the median goodput in Mbit/s against message
// size, one series per transport, the error bars spanning the repeats'
// lowest and highest goodput.
func Goodput(d *results.Document) []Figure {
	var out []Figure
	all := splitCells(d)
	for _, s := range all {
		name, words := s.suffix(all)
		f, ok := figureOf("goodput-"+name, fmt.Sprintf("Goodput, %s (median; bars: lowest to highest of the repeats)", words),
			"Mbit/s", d.Spec, s.plain(), func(c matrix.Cell) (Point, bool) {
				r := s.lookup(c)
				if len(r.Samples) == 0 {
					return Point{}, false
				}
				return Point{Y: r.MedianBps / 1e6, Lo: r.MinBps / 1e6, Hi: r.MaxBps / 1e6, Cell: r.Key}, true
			})
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// CPUPerByte is, per direction, the CPU time the machine spent per byte
// delivered (busy CPU-seconds over the sample's bytes, in nanoseconds: both
// ends in single-host mode), median over the repeats with bars from the
// lowest to the highest.
func CPUPerByte(d *results.Document) []Figure {
	var out []Figure
	all := splitCells(d)
	for _, s := range all {
		name, words := s.suffix(all)
		f, ok := figureOf("cpu-"+name, fmt.Sprintf("CPU time per byte delivered, %s (median; bars: lowest to highest)", words),
			"CPU ns/byte", d.Spec, s.plain(), func(c matrix.Cell) (Point, bool) {
				r := s.lookup(c)
				var v []float64
				for _, x := range r.Samples {
					if x.Bytes > 0 && x.Seconds > 0 {
						cpu := x.CPU.BusyCores
						if x.ServerCPU != nil {
							cpu += x.ServerCPU.BusyCores
						}
						v = append(v, cpu*x.Seconds*1e9/float64(x.Bytes))
					}
				}
				if len(v) == 0 {
					return Point{}, false
				}
				m, lo, hi := span(v)
				return Point{Y: m, Lo: lo, Hi: hi, Cell: r.Key}, true
			})
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// Cycles is, per direction, the CPU cycles per byte delivered where the
// machine has hardware counters (Sample.CPU.CyclesPerByte), median over the
// repeats with bars from the lowest to the highest; none where it has not.
func Cycles(d *results.Document) []Figure {
	var out []Figure
	all := splitCells(d)
	for _, s := range all {
		name, words := s.suffix(all)
		f, ok := figureOf("cycles-"+name, fmt.Sprintf("CPU cycles per byte delivered, %s (median; bars: lowest to highest)", words),
			"cycles/byte", d.Spec, s.plain(), func(c matrix.Cell) (Point, bool) {
				r := s.lookup(c)
				var v []float64
				for _, x := range r.Samples {
					if x.CPU.CyclesPerByte > 0 {
						v = append(v, x.CPU.CyclesPerByte)
					}
				}
				if len(v) == 0 {
					return Point{}, false
				}
				m, lo, hi := span(v)
				return Point{Y: m, Lo: lo, Hi: hi, Cell: r.Key}, true
			})
		if ok {
			out = append(out, f)
		}
	}
	return out
}

// Metric is one figure per MB delivered drawn from a sample's --explain
// counters.
type Metric struct {
	// Name is the file stem's part ("sender-packets").
	Name string
	// Title says what is counted.
	Title string
	// Value computes the metric of a sample of a cell whose sender and
	// receiver are named ("client" or "server"); ok false where the sample
	// lacks the counters.
	Value func(c map[string]float64, sender, receiver string) (v float64, ok bool)
	// OwnProcess marks a metric of this process's system calls, which the
	// native driver's cells (other processes: the C tools) do not have.
	OwnProcess bool
}

// Metrics are the counters Counters draws: the figures of `kqbench report
// --explain` (packets the sender's device sent, packets the receiver's
// stack took in, system calls, drops), per MB delivered.
var Metrics = []Metric{
	{"sender-packets", "Packets sent by the sender's device per MB", func(c map[string]float64, snd, _ string) (float64, bool) {
		v, ok := c[snd+".tx_packets"]
		return v, ok
	}, false},
	{"receiver-packets", "Packets taken in by the receiver's stack per MB", func(c map[string]float64, _, rcv string) (float64, bool) {
		v, ok := c[rcv+".rx_packets"]
		return v, ok
	}, false},
	{"syscalls", "System calls per MB (both ends)", func(c map[string]float64, _, _ string) (float64, bool) {
		sum, ok := 0.0, false
		for _, k := range []string{"client.syscalls", "server.syscalls", "process.syscalls", "server_process.syscalls"} {
			if v, has := c[k]; has {
				sum, ok = sum+v, true
			}
		}
		return sum, ok
	}, true},
	{"io-syscalls", "System calls that move data per MB (sendmsg, recvmsg, read, write, ...)", func(c map[string]float64, _, _ string) (float64, bool) {
		sum, ok := 0.0, false
		for k, v := range c {
			if render.IOSyscall(k) {
				sum, ok = sum+v, true
			}
		}
		return sum, ok
	}, true},
	{"drops", "Packets dropped per MB (both ends)", func(c map[string]float64, _, _ string) (float64, bool) {
		a, okA := c["client.drops"]
		b, okB := c["server.drops"]
		return a + b, okA || okB
	}, false},
	{"wire-packets", "Packets on the wire per MB (capture, both ways)", func(c map[string]float64, _, _ string) (float64, bool) {
		tx, ok := c["wire.tx_packets"]
		return tx + c["wire.rx_packets"], ok
	}, false},
}

// Counters is, per direction and per Metric the document's samples carry,
// the metric per MB delivered against message size (median over the
// repeats, bars from the lowest to the highest). A document without
// --explain counters gives none.
func Counters(d *results.Document) []Figure {
	var out []Figure
	all := splitCells(d)
	for _, m := range Metrics {
		for _, s := range all {
			name, words := s.suffix(all)
			f, ok := figureOf(m.Name+"-"+name, fmt.Sprintf("%s, %s (median; bars: lowest to highest)", m.Title, words),
				"per MB", d.Spec, s.plain(), func(c matrix.Cell) (Point, bool) {
					r := s.lookup(c)
					if m.OwnProcess && r.Driver != "" {
						return Point{}, false // another process's system calls
					}
					snd, rcv := "client", "server"
					if r.Direction == "down" {
						snd, rcv = rcv, snd
					}
					var v []float64
					for _, x := range r.Samples {
						if x.Bytes == 0 || x.Counters == nil {
							continue
						}
						if n, ok := m.Value(x.Counters, snd, rcv); ok {
							v = append(v, n/(float64(x.Bytes)/1e6))
						}
					}
					if len(v) == 0 {
						return Point{}, false
					}
					med, lo, hi := span(v)
					return Point{Y: med, Lo: lo, Hi: hi, Cell: r.Key}, true
				})
			if ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// All is every figure of a document: goodput, CPU per byte, cycles per
// byte (where counted), the counters, then the registered ones
// (RegisterFigures).
func All(d *results.Document) []Figure {
	out := Goodput(d)
	out = append(out, CPUPerByte(d)...)
	out = append(out, Cycles(d)...)
	out = append(out, Counters(d)...)
	extraMu.RLock()
	defer extraMu.RUnlock()
	for _, f := range extra {
		out = append(out, f(d)...)
	}
	return out
}

var (
	extraMu sync.RWMutex
	extra   []func(*results.Document) []Figure
)

// RegisterFigures adds figures a mode draws of its documents (a scaling
// figure over connection counts), which All draws after the others; f
// returns none for a document it has nothing to draw of.
func RegisterFigures(f func(d *results.Document) []Figure) {
	extraMu.Lock()
	defer extraMu.Unlock()
	extra = append(extra, f)
}

package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
	"kquic.dev/bench/matrix"
	"kquic.dev/internal/jsonnum"
	"kquic.dev/internal/jsonobj"
)

// ErrIncomparable is wrapped by Compare's error when the two runs differ in
// something that changes the figures (see Comparison.Differences).
var ErrIncomparable = errors.New("the runs differ in what they measured on")

// CompareOptions configures Compare.
type CompareOptions struct {
	// Force compares runs whose environments differ, listing how.
	Force bool
	// Alpha is the significance level (default 0.05).
	Alpha float64
}

// Interval is a median with its confidence interval (95%), over N samples.
type Interval struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	N      int     `json:"n"`
}

// Delta compares one figure between two runs: old and new medians with
// their intervals, the change in percent (infinite, null in JSON, from a
// median of 0), and the Mann-Whitney U test's p value
// (benchmath.AssumeNothing, as benchstat). Significant is p < alpha.
type Delta struct {
	Name        string   `json:"name"`
	Old         Interval `json:"old"`
	New         Interval `json:"new"`
	ChangePct   float64  `json:"change_pct"`
	P           float64  `json:"p"`
	Significant bool     `json:"significant"`
	// Note says why no test was possible (too few samples).
	Note string `json:"note,omitempty"`
	// Zero: every sample of both runs was 0 (a counter that did not
	// count here).
	Zero bool `json:"zero,omitempty"`
}

// CellComparison is one cell present in both runs.
type CellComparison struct {
	Key string `json:"key"`
	matrix.Cell
	// Goodput compares the samples' goodput in Mbit/s.
	Goodput Delta `json:"goodput_mbps"`
	// Counters compares each --explain counter per MB delivered present in
	// both runs, so the answer says why.
	Counters []Delta `json:"counters_per_mb,omitempty"`
	// Figures compares the figures of the cells' mode (PayloadType.Figures)
	// sample by sample, saved under FiguresKey (the payloads' key).
	Figures    []Delta `json:"-"`
	FiguresKey string  `json:"-"`
	// Unit heads the columns of Goodput's figure ("": Mbit/s).
	Unit string `json:"-"`
}

// MarshalJSON encodes the comparison with the mode's figures last.
func (c CellComparison) MarshalJSON() ([]byte, error) {
	type plain CellComparison
	var parts []jsonobj.Part
	if len(c.Figures) > 0 {
		parts = append(parts, jsonobj.Part{Key: c.FiguresKey, Value: c.Figures})
	}
	return jsonobj.Marshal(plain(c), parts...)
}

// Comparison is the answer of Compare.
type Comparison struct {
	// Old and New are the runs' labels (Document.Label), if they have one.
	Old string `json:"old_label,omitempty"`
	New string `json:"new_label,omitempty"`
	// Differences lists how the two environments differ where it changes
	// the figures; Compare refuses without Force when it is not empty.
	Differences []string `json:"differences,omitempty"`
	// AlsoDiffer lists what else differs and may be the point of the
	// comparison (the kernel, the QUIC module's code): said, not refused.
	AlsoDiffer []string         `json:"also_differ,omitempty"`
	Cells      []CellComparison `json:"cells"`
	// OnlyOld and OnlyNew are cells measured in one run only.
	OnlyOld []string `json:"only_old,omitempty"`
	OnlyNew []string `json:"only_new,omitempty"`
}

// environmentDifferences lists what differs between two runs' environments
// in a way that matters for the figures.
func environmentDifferences(a, b *Document) []string {
	var out []string
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %q and %q", what, x, y))
		}
	}
	diff("CPU model", a.Env.CPUModel, b.Env.CPUModel)
	diff("CPUs", strconv.Itoa(a.Env.CPUs), strconv.Itoa(b.Env.CPUs))
	diff("machine", a.Env.Machine.Kind, b.Env.Machine.Kind)
	diff("kqbench version", a.Env.Kqbench, b.Env.Kqbench)
	diff("topology", a.Env.Topology, b.Env.Topology)
	diff("message sizes", fmt.Sprint(a.Spec.Sizes), fmt.Sprint(b.Spec.Sizes))
	diff("streams", strconv.Itoa(a.Spec.Streams), strconv.Itoa(b.Spec.Streams))
	diff("CPU pinning", a.Spec.Affinity.String(), b.Spec.Affinity.String())
	diff("mode", string(a.Spec.Mode), string(b.Spec.Mode))
	diff("sample time", a.Spec.Time.String(), b.Spec.Time.String())
	diff("receiver read size", strconv.Itoa(a.Spec.ReadSize), strconv.Itoa(b.Spec.ReadSize))
	// A cell's offloads (MTU, TSO/GSO state) must be the same in both.
	for _, ca := range a.Cells {
		if cb, ok := b.LookupKey(ca.Key); ok && ca.Status == StatusOK && cb.Status == StatusOK {
			if oa, ob := offloadState(ca.Offloads), offloadState(cb.Offloads); oa != ob {
				out = append(out, fmt.Sprintf("offloads of %s: %q and %q", ca.Key, oa, ob))
			}
		}
	}
	return out
}

// otherDifferences lists what differs between two runs that an A/B of
// kernels or module builds sets out to change: the kernel and the module.
func otherDifferences(a, b *Document) []string {
	var out []string
	if a.Env.Kernel != b.Env.Kernel || a.Env.KernelVersion != b.Env.KernelVersion {
		out = append(out, fmt.Sprintf("kernel: %q and %q", strings.TrimSpace(a.Env.Kernel+" "+a.Env.KernelVersion), strings.TrimSpace(b.Env.Kernel+" "+b.Env.KernelVersion)))
	}
	if a.Env.Machine.QUICModuleCode != b.Env.Machine.QUICModuleCode && (a.Env.Machine.QUICModuleCode != "" || b.Env.Machine.QUICModuleCode != "") {
		out = append(out, fmt.Sprintf("QUIC module code: %q and %q", a.Env.Machine.QUICModuleCode, b.Env.Machine.QUICModuleCode))
	}
	return out
}

// offloadState is the device part of a cell's offloads record.
func offloadState(s string) string {
	before, _, _ := strings.Cut(s, ";")
	return strings.TrimSpace(before)
}

// Compare compares the cells the two runs have in common, as benchstat
// compares benchmarks: per cell the two medians with 95% intervals, the
// change, and whether it is significant (Mann-Whitney U over the repeats),
// and the same for every --explain counter per MB. It refuses runs whose
// environments differ in what matters (ErrIncomparable, with the list)
// unless o.Force.
func Compare(old, new *Document, o CompareOptions) (*Comparison, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	cmp := &Comparison{Differences: environmentDifferences(old, new), AlsoDiffer: otherDifferences(old, new), Old: old.Label, New: new.Label}
	if len(cmp.Differences) > 0 && !o.Force {
		also := ""
		if len(cmp.AlsoDiffer) > 0 {
			also = "; they differ also in " + strings.Join(cmp.AlsoDiffer, "; ")
		}
		return cmp, fmt.Errorf("%w: %s%s (compare anyway with --force)", ErrIncomparable, strings.Join(cmp.Differences, "; "), also)
	}
	thr := &benchmath.DefaultThresholds
	for _, a := range old.Cells {
		b, ok := new.LookupKey(a.Key)
		if !ok {
			if a.Status == StatusOK {
				cmp.OnlyOld = append(cmp.OnlyOld, a.Key)
			}
			continue
		}
		if a.Status != StatusOK || b.Status != StatusOK {
			if a.Status == StatusOK {
				cmp.OnlyOld = append(cmp.OnlyOld, a.Key+" (new: "+string(b.Status)+")")
			} else if b.Status == StatusOK {
				cmp.OnlyNew = append(cmp.OnlyNew, a.Key+" (old: "+string(a.Status)+")")
			}
			continue
		}
		cc := compareCell(a, *b, thr, o.Alpha)
		cmp.Cells = append(cmp.Cells, cc)
	}
	for _, b := range new.Cells {
		if _, ok := old.LookupKey(b.Key); !ok && b.Status == StatusOK {
			cmp.OnlyNew = append(cmp.OnlyNew, b.Key)
		}
	}
	if len(cmp.Cells) == 0 {
		return cmp, errors.New("the two runs have no measured cell in common")
	}
	return cmp, nil
}

// compareCell compares a cell both runs measured: its figure of merit
// (the goodput, or its mode's metric), its mode's other figures, and the
// counters per MB both have.
func compareCell(a, b CellResult, thr *benchmath.Thresholds, alpha float64) CellComparison {
	cc := CellComparison{Key: a.Key, Cell: a.Cell}
	metric := "goodput Mbit/s"
	if p, t := firstPayload(a.Samples); t != nil && t.Metric != nil {
		metric, _ = t.Metric(p)
		cc.Unit = t.Unit
	}
	cc.Goodput = delta(metric, goodputs(a), goodputs(b), thr, alpha)
	if _, t := firstPayload(a.Samples); t != nil && len(t.Figures) > 0 {
		if _, tb := firstPayload(b.Samples); tb == t {
			cc.FiguresKey = t.Key
			for _, f := range t.Figures {
				cc.Figures = append(cc.Figures, delta(f.Name, figureValues(a, t, f), figureValues(b, t, f), thr, alpha))
			}
		}
	}
	for _, name := range counterNames(a, b) {
		cc.Counters = append(cc.Counters, delta(name, perMB(a, name), perMB(b, name), thr, alpha))
	}
	return cc
}

// firstPayload is the first payload among the samples of a registered
// type, and its type.
func firstPayload(ss []Sample) (Payload, *PayloadType) {
	for _, s := range ss {
		if t := typeOf(s.Payload); t != nil {
			return s.Payload, t
		}
	}
	return nil, nil
}

// figureValues are figure f of the samples whose payload is of type t.
func figureValues(c CellResult, t *PayloadType, f Figure) []float64 {
	var v []float64
	for _, s := range c.Samples {
		if typeOf(s.Payload) == t {
			v = append(v, f.Value(s.Payload))
		}
	}
	return v
}

// goodputs are the samples' values of the cell's figure of merit: their
// mode's metric (PayloadType.Metric), or their goodput in Mbit/s.
func goodputs(c CellResult) []float64 {
	var v []float64
	for _, s := range c.Samples {
		if t := typeOf(s.Payload); t != nil && t.Metric != nil {
			_, x := t.Metric(s.Payload)
			v = append(v, x)
			continue
		}
		v = append(v, s.Bps/1e6)
	}
	return v
}

// counterNames are the counters every sample of both cells has.
func counterNames(a, b CellResult) []string {
	count := map[string]int{}
	total := 0
	for _, c := range []CellResult{a, b} {
		for _, s := range c.Samples {
			if s.Bytes == 0 {
				continue
			}
			total++
			for k := range s.Counters {
				count[k]++
			}
		}
	}
	var out []string
	for k, n := range count {
		if n == total && total > 0 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func perMB(c CellResult, name string) []float64 {
	var v []float64
	for _, s := range c.Samples {
		if s.Bytes > 0 {
			v = append(v, s.Counters[name]/(float64(s.Bytes)/1e6))
		}
	}
	return v
}

func interval(xs []float64, thr *benchmath.Thresholds) Interval {
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(xs, thr), 0.95)
	return Interval{Center: s.Center, Lo: s.Lo, Hi: s.Hi, N: len(xs)}
}

func delta(name string, old, new []float64, thr *benchmath.Thresholds, alpha float64) Delta {
	d := Delta{Name: name, Old: interval(old, thr), New: interval(new, thr), Zero: allZero(old) && allZero(new)}
	switch {
	case d.Old.Center != 0:
		d.ChangePct = (d.New.Center - d.Old.Center) / math.Abs(d.Old.Center) * 100
	case d.New.Center != 0: // from nothing: no percentage says it
		d.ChangePct = math.Inf(int(math.Copysign(1, d.New.Center)))
	}
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(old, thr), benchmath.NewSample(new, thr))
	d.P = c.P
	d.Significant = c.P < alpha
	if len(c.Warnings) > 0 {
		var ws []string
		for _, w := range c.Warnings {
			ws = append(ws, w.Error())
		}
		d.Note = strings.Join(ws, "; ")
	}
	return d
}

// MarshalJSON encodes bounds that are not finite as null.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Center jsonnum.Finite `json:"center"`
		Lo     jsonnum.Finite `json:"lo"`
		Hi     jsonnum.Finite `json:"hi"`
		N      int            `json:"n"`
	}{jsonnum.Finite(i.Center), jsonnum.Finite(i.Lo), jsonnum.Finite(i.Hi), i.N})
}

// MarshalJSON encodes figures that are not finite as null.
func (d Delta) MarshalJSON() ([]byte, error) {
	type plain Delta
	return json.Marshal(struct {
		plain
		ChangePct jsonnum.Finite `json:"change_pct"`
		P         jsonnum.Finite `json:"p"`
	}{plain(d), jsonnum.Finite(d.ChangePct), jsonnum.Finite(d.P)})
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
)

// probeSample and probeSummary are a test mode's payloads: a count per
// sample, and the cells' sum of them.
type probeSample struct {
	Count int `json:"count"`
}

func (*probeSample) PayloadKey() string { return "probe" }

type probeSummary struct {
	Total int `json:"total"`
}

func (*probeSummary) PayloadKey() string { return "probe" }

func init() {
	RegisterPayload(PayloadType{
		Key:       "probe",
		Sample:    func() Payload { return &probeSample{} },
		Cell:      func() Payload { return &probeSummary{} },
		CellAfter: "status",
		Summarize: func(r *CellResult) {
			sum := &probeSummary{}
			for _, s := range r.Samples {
				sum.Total += s.Payload.(*probeSample).Count
			}
			r.Payload = sum
		},
		Metric: func(p Payload) (string, float64) { return "counts", float64(p.(*probeSample).Count) },
		Unit:   "counts",
		Figures: []Figure{{Name: "double", Value: func(p Payload) float64 {
			return 2 * float64(p.(*probeSample).Count)
		}}},
		Plotted: func(p Payload) bool { return p.(*probeSummary).Total < 100 },
	})
}

func probeCell(counts ...int) CellResult {
	c := matrix.Cell{Transport: "tcp", Size: 1, MTU: 1500, Direction: "up", Streams: 1}
	r := CellResult{Cell: c, Key: "probe/" + c.Key(), Status: StatusOK}
	for _, n := range counts {
		r.Samples = append(r.Samples, Sample{Bytes: 1e6, Seconds: 1, Bps: 8e6, Payload: &probeSample{Count: n}})
	}
	r.Summarize()
	return r
}

// TestPayloadSavedAndRead: a registered payload is saved under its key,
// the cell's summary after the field its type names, and both read back
// into their types; fields no type has are kept as they were read.
func TestPayloadSavedAndRead(t *testing.T) {
	r := probeCell(3, 4)
	if r.Payload.(*probeSummary).Total != 7 || r.MedianBps != 8e6 {
		t.Fatalf("summary %+v, median %v", r.Payload, r.MedianBps)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"status":"ok","probe":{"total":7},"samples":`) || !strings.Contains(string(b), `"probe":{"count":3}}`) {
		t.Errorf("encoded %s", b)
	}
	var back CellResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Payload.(*probeSummary).Total != 7 || back.Samples[1].Payload.(*probeSample).Count != 4 {
		t.Errorf("read back %+v, %+v", back.Payload, back.Samples[1].Payload)
	}

	in := []byte(`{"bytes":1,"seconds":0,"bps":0,"cpu":{"busy_cores":0,"softirq_cores":0,"process_cores":0,"steal_cores":0},"streams":0,"warmup_seconds":0,"finished":"0001-01-01T00:00:00Z","future":{"x":[1,2]},"probe":{"count":9},"later":true}`)
	var s Sample
	if err := json.Unmarshal(in, &s); err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Payload.(*probeSample); !ok || p.Count != 9 {
		t.Errorf("payload %#v", s.Payload)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `"finished":"0001-01-01T00:00:00Z","probe":{"count":9},"future":{"x":[1,2]},"later":true}`
	if !bytes.HasSuffix(out, []byte(want)) {
		t.Errorf("saved again as %s, want it to end %s", out, want)
	}
}

// TestPayloadCompared: compare sets the mode's metric side by side in
// place of the goodput, with its unit, and its figures after it, saved
// under the payloads' key.
func TestPayloadCompared(t *testing.T) {
	old := &Document{Schema: SchemaVersion, Cells: []CellResult{probeCell(1, 2, 3, 4, 5)}}
	new := &Document{Schema: SchemaVersion, Cells: []CellResult{probeCell(11, 12, 13, 14, 15)}}
	cmp, err := Compare(old, new, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc := cmp.Cells[0]
	if cc.Goodput.Name != "counts" || cc.Unit != "counts" || cc.Goodput.Old.Center != 3 || cc.Goodput.New.Center != 13 || !cc.Goodput.Significant {
		t.Errorf("metric %+v, unit %q", cc.Goodput, cc.Unit)
	}
	if len(cc.Figures) != 1 || cc.Figures[0].Name != "double" || cc.Figures[0].New.Center != 26 {
		t.Errorf("figures %+v", cc.Figures)
	}
	b, err := json.Marshal(cc)
	if err != nil || !bytes.Contains(b, []byte(`,"probe":[{"name":"double",`)) {
		t.Errorf("comparison encoded %s (%v)", b, err)
	}
	if r := probeCell(1); !r.Plotted() {
		t.Error("a cell of 1 count: not plotted")
	}
	if r := probeCell(100); r.Plotted() {
		t.Error("a cell of 100 counts: plotted")
	}
	if r := (CellResult{}); !r.Plotted() {
		t.Error("a cell without a payload: not plotted")
	}
}

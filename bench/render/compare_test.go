package render_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
)

// synthetic is a document with one cell per transport, each with n samples
// of goodput around mean Mbit/s (relative noise sd), and a counter.
func synthetic(seed uint64, n int, means map[string]float64, sd float64) *results.Document {
	rnd := rand.New(rand.NewPCG(seed, 7))
	d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Sizes: []int{1024}, Streams: 1}}
	d.Env.CPUModel, d.Env.CPUs = "test CPU", 2
	for _, t := range []string{"kquic", "ktls"} {
		c := matrix.Cell{Transport: t, Size: 1024, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1}
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK, Offloads: "mtu=1500 tso=on; note"}
		for i := 0; i < n; i++ {
			v := means[t] * (1 + sd*rnd.NormFloat64())
			r.Samples = append(r.Samples, results.Sample{Bps: v * 1e6, Bytes: 1e6, Counters: map[string]float64{"client.tx_packets": 700 * (1 + sd*rnd.NormFloat64())}})
		}
		d.Cells = append(d.Cells, r)
	}
	return d
}

// TestCompareShiftAndNoise: a 10% rise of kquic over 10 repeats is
// significant with the right sign; ktls, unchanged but noisy, is "~".
func TestCompareShiftAndNoise(t *testing.T) {
	old := synthetic(1, 10, map[string]float64{"kquic": 100, "ktls": 200}, 0.02)
	new := synthetic(2, 10, map[string]float64{"kquic": 110, "ktls": 200}, 0.02)
	c, err := results.Compare(old, new, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]results.Delta{}
	for _, cc := range c.Cells {
		got[cc.Transport] = cc.Goodput
		if len(cc.Counters) != 1 || cc.Counters[0].Name != "client.tx_packets" {
			t.Errorf("%s: counters %+v", cc.Key, cc.Counters)
		}
	}
	if d := got["kquic"]; !d.Significant || d.ChangePct < 7 || d.ChangePct > 13 {
		t.Errorf("kquic +10%%: %+v, want significant, about +10%%", d)
	}
	if d := got["ktls"]; d.Significant {
		t.Errorf("ktls, unchanged: %+v, want not significant", d)
	}
	var out bytes.Buffer
	render.WriteComparison(&out, c, render.ComparisonView{Counters: render.ChangedCounters})
	lines := strings.Split(out.String(), "\n")
	var kq, kt string
	for _, l := range lines {
		if strings.HasPrefix(l, "kquic/") {
			kq = l
		}
		if strings.HasPrefix(l, "ktls/") {
			kt = l
		}
	}
	if !strings.Contains(kq, "+") || strings.Contains(kq, " ~ ") {
		t.Errorf("kquic line %q: want a positive change", kq)
	}
	if !strings.Contains(kt, " ~ ") {
		t.Errorf("ktls line %q: want ~", kt)
	}
	// A fall is negative.
	c, _ = results.Compare(new, old, results.CompareOptions{})
	for _, cc := range c.Cells {
		if cc.Transport == "kquic" && (!cc.Goodput.Significant || cc.Goodput.ChangePct > -7) {
			t.Errorf("kquic -9%%: %+v", cc.Goodput)
		}
	}
}

// TestCompareRefusesDifferentMachines: runs on different CPUs, or with a
// cell's offloads different, are refused unless forced, with the list.
func TestCompareRefusesDifferentMachines(t *testing.T) {
	old := synthetic(1, 5, map[string]float64{"kquic": 100, "ktls": 200}, 0.02)
	new := synthetic(2, 5, map[string]float64{"kquic": 100, "ktls": 200}, 0.02)
	new.Env.CPUModel = "another CPU"
	new.Cells[0].Offloads = "mtu=1500 tso=off; note"
	_, err := results.Compare(old, new, results.CompareOptions{})
	if !errors.Is(err, results.ErrIncomparable) || !strings.Contains(err.Error(), "CPU model") || !strings.Contains(err.Error(), "offloads of kquic/") {
		t.Fatalf("Compare of different machines = %v", err)
	}
	c, err := results.Compare(old, new, results.CompareOptions{Force: true})
	if err != nil || len(c.Differences) != 2 || len(c.Cells) != 2 {
		t.Errorf("forced: %v, %+v", err, c)
	}
}

// TestCompareWhatCanBe: cells in one run only are listed, what is common
// is compared, and runs with nothing in common are an error.
func TestCompareWhatCanBe(t *testing.T) {
	old := synthetic(1, 5, map[string]float64{"kquic": 100, "ktls": 200}, 0.02)
	new := synthetic(2, 5, map[string]float64{"kquic": 100, "ktls": 200}, 0.02)
	new.Cells[1].Status, new.Cells[1].Error = results.StatusFailed, "boom"
	c, err := results.Compare(old, new, results.CompareOptions{})
	if err != nil || len(c.Cells) != 1 || len(c.OnlyOld) != 1 {
		t.Errorf("one failed cell: %v, cells %d, only old %v", err, len(c.Cells), c.OnlyOld)
	}
	new.Cells = new.Cells[1:]
	new.Cells[0].Key = "other"
	if _, err := results.Compare(old, new, results.CompareOptions{}); err == nil || !strings.Contains(err.Error(), "no measured cell in common") {
		t.Errorf("nothing in common: %v", err)
	}
}

// TestCompareLabels: runs labelled before and after (matrix --label, an A/B
// across reboots) are named so in the comparison's columns and JSON.
func TestCompareLabels(t *testing.T) {
	old := synthetic(1, 5, map[string]float64{"kquic": 100}, 0.02)
	new := synthetic(2, 5, map[string]float64{"kquic": 100}, 0.02)
	old.Label, new.Label = "before", "after"
	c, err := results.Compare(old, new, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	render.WriteComparison(&out, c, render.ComparisonView{})
	if !strings.Contains(out.String(), "before Mbit/s") || !strings.Contains(out.String(), "after Mbit/s") {
		t.Errorf("columns not named by the labels:\n%s", out.String())
	}
	out.Reset()
	if err := render.WriteComparisonJSON(&out, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"old_label": "before"`) {
		t.Errorf("JSON without the labels:\n%.300s", out.String())
	}
}

// TestCompareCounterView: by default --counters shows the counters that
// counted on either side, the significant changes first (the largest
// first), says how many zero ones it left out, and prints a rise from 0 as
// "from 0", not "+0.0%"; an interval wider than its median is shown as
// its bounds, not as a percentage; the A/B view heads its columns A and B;
// and a kernel that differs is said.
func TestCompareCounterView(t *testing.T) {
	doc := func(seed uint64, kernel string, counters func(i int) map[string]float64) *results.Document {
		d := synthetic(seed, 8, map[string]float64{"kquic": 100, "ktls": 200}, 0.01)
		d.Env.Kernel = kernel
		for ci := range d.Cells {
			for i := range d.Cells[ci].Samples {
				d.Cells[ci].Samples[i].Counters = counters(i)
			}
		}
		return d
	}
	old := doc(1, "7.3.4", func(i int) map[string]float64 {
		return map[string]float64{"a.zero": 0, "b.rises_from_zero": 0, "c.halves": 800, "d.steady": 100 + float64(i%2), "e.wide": []float64{1, 200, 3, 400, 2, 300, 1, 500}[i]}
	})
	new := doc(2, "7.3.5", func(i int) map[string]float64 {
		return map[string]float64{"a.zero": 0, "b.rises_from_zero": 5 + float64(i%2), "c.halves": 400, "d.steady": 100 + float64(i%2), "e.wide": []float64{1, 200, 3, 400, 2, 300, 1, 500}[i]}
	})
	c, err := results.Compare(old, new, results.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render.WriteComparison(&out, c, render.ComparisonView{Counters: render.ChangedCounters, Old: "A", New: "B"}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	lines := strings.Split(text, "\n")
	var kquic []string // the counter rows of the kquic cell, in order
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "kquic/"):
			in = true
		case !strings.HasPrefix(l, "  "):
			in = false
		case in:
			kquic = append(kquic, l)
		}
	}
	order := func(name string) int {
		for i, l := range kquic {
			if strings.Contains(l, name) {
				return i
			}
		}
		return -1
	}
	if order("a.zero") != -1 {
		t.Error("a counter zero in both runs is shown")
	}
	if r, h, s := order("b.rises_from_zero"), order("c.halves"), order("d.steady"); r != 0 || h != 1 || s < 2 {
		t.Errorf("counter rows in the order %q; want the rise from 0 (no bound), then the halving (-50%%), then the rest", kquic)
	}
	if l := kquic[max(order("b.rises_from_zero"), 0)]; !strings.Contains(l, "from 0") || strings.Contains(l, "+0.0%") {
		t.Errorf("a rise from 0: %q, want \"from 0\"", l)
	}
	if l := kquic[max(order("e.wide"), 0)]; !strings.Contains(l, "[") || strings.Contains(l, "±") {
		t.Errorf("an interval wider than its median: %q, want its bounds", l)
	}
	for _, want := range []string{"cell  ", "A Mbit/s", "B Mbit/s", `the runs differ in kernel: "7.3.4" and "7.3.5"`, "2 counters zero in both runs not shown"} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison does not say %q", want)
		}
	}
	out.Reset()
	render.WriteComparison(&out, c, render.ComparisonView{Counters: render.AllCounters})
	if !strings.Contains(out.String(), "a.zero") || !strings.Contains(out.String(), "old Mbit/s") {
		t.Errorf("--all-counters leaves out the zero counter, or the unlabelled runs are not old and new:\n%s", out.String())
	}
	// JSON: a change from 0 has no percentage (null), not 0.
	var js bytes.Buffer
	render.WriteComparisonJSON(&js, c)
	if !strings.Contains(js.String(), `"name": "b.rises_from_zero"`) || strings.Count(js.String(), `"change_pct": null`) < 2 {
		t.Errorf("JSON: the rise from 0 is not a null change:\n%.2000s", js.String())
	}
}

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
	render.WriteComparison(&out, c, true)
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
	render.WriteComparison(&out, c, false)
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

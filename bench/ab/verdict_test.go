package ab

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchmath"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

// TestMannWhitneyGreater: complete separation of 4 and 4 is 1/70; the
// two one-sided tests make benchmath's two-sided one (as kqbench compare
// uses) on samples without ties: exactly up to 2500 pairs, and close to it
// above (the normal approximation).
func TestMannWhitneyGreater(t *testing.T) {
	if p := MannWhitneyGreater([]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}); math.Abs(p-1.0/70) > 1e-12 {
		t.Errorf("4 above 4: p = %v, want 1/70", p)
	}
	if p := MannWhitneyGreater([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}); p != 1 {
		t.Errorf("4 below 4: p = %v, want 1", p)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{4, 4}, {5, 7}, {8, 8}, {12, 10}, {30, 30}, {60, 50}} {
		for trial := 0; trial < 20; trial++ {
			x, y := make([]float64, n[0]), make([]float64, n[1])
			for i := range x {
				x[i] = r.NormFloat64() + 0.8
			}
			for i := range y {
				y[i] = r.NormFloat64()
			}
			want := benchmath.AssumeNothing.Compare(benchmath.NewSample(x, &benchmath.DefaultThresholds), benchmath.NewSample(y, &benchmath.DefaultThresholds)).P
			got := math.Min(1, 2*math.Min(MannWhitneyGreater(x, y), MannWhitneyGreater(y, x)))
			tol := 1e-9 * want // exact
			if n[0]*n[1] > 2500 {
				tol = 0.2 * want // the normal approximation
			}
			if math.Abs(got-want) > tol+1e-12 {
				t.Errorf("n=%v: two one-sided tests give %v, benchmath %v", n, got, want)
			}
		}
	}
}

// doc is a results document of one bulk cell whose samples are vs (Mbit/s)
// and the sender's packets per MB ppm.
func doc(vs []float64, ppm float64) *results.Document {
	c := matrix.Cell{Transport: "tcp", Size: 16384, MTU: 1500, GSO: true, Direction: "up", Streams: 1}
	r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
	for _, v := range vs {
		r.Samples = append(r.Samples, results.Sample{Bps: v * 1e6, Bytes: 1e8, Seconds: 1, Counters: map[string]float64{"client.tx_packets": ppm * 100}})
	}
	return &results.Document{Cells: []results.CellResult{r}}
}

// TestJudge: B far below A is worse (exit 1), B as A is the same (exit 0),
// a sample a side decides nothing (exit 125), a change within the
// threshold is the same; a metric where lower is better turns it round.
func TestJudge(t *testing.T) {
	goodput, _ := ParseMetric("goodput")
	packets, _ := ParseMetric("packets")
	a := []float64{100, 104, 97, 101, 99, 103}
	scale := func(f float64, vs []float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			out[i] = v * f * (1 + 0.01*float64(i%3-1))
		}
		return out
	}
	for _, c := range []struct {
		name      string
		a, b      *results.Document
		metric    Metric
		threshold float64
		want      Verdict
		wantExit  int
	}{
		{"half", doc(a, 800), doc(scale(0.5, a), 800), goodput, 0.05, Worse, 1},
		{"same", doc(a, 800), doc(scale(1, a), 800), goodput, 0.05, Same, 0},
		{"faster", doc(a, 800), doc(scale(1.3, a), 800), goodput, 0.05, Same, 0},
		{"3% down, 10% threshold", doc(a, 800), doc(scale(0.97, a), 800), goodput, 0.10, Same, 0},
		{"one sample a side", doc(a[:1], 800), doc(scale(0.5, a[:1]), 800), goodput, 0.05, Undecided, 125},
		{"at the threshold", doc(a, 800), doc(scale(0.9, a), 800), goodput, 0.10, Undecided, 125},
		{"more packets per MB", doc(a, 400), doc(a, 800), packets, 0.05, Worse, 1},
		{"fewer packets per MB", doc(a, 800), doc(a, 400), packets, 0.05, Same, 0},
		{"faster, looking for an improvement", doc(a, 800), doc(scale(1.3, a), 800), goodput.Reversed(), 0.05, Worse, 1},
		{"same, looking for an improvement", doc(a, 800), doc(scale(1, a), 800), goodput.Reversed(), 0.05, Same, 0},
	} {
		j, err := Judge(c.a, c.b, JudgeOptions{Metric: c.metric, Threshold: c.threshold})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if j.Verdict != c.want || j.Verdict.ExitCode() != c.wantExit {
			t.Errorf("%s: %s (exit %d), want %s (exit %d)\n%s", c.name, j.Verdict, j.Verdict.ExitCode(), c.want, c.wantExit, j)
		}
	}
	// A judgement reads back from its JSON (bisect.json keeps them).
	j, _ := Judge(doc(a, 800), doc(scale(0.5, a), 800), JudgeOptions{Metric: goodput, Threshold: 0.05})
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var back Judgement
	if err := json.Unmarshal(b, &back); err != nil || back.Verdict != Worse || back.Metric.Name != "goodput" || back.Cells[0].PWorse != j.Cells[0].PWorse {
		t.Errorf("JSON %s read back as %+v, %v", b, back, err)
	}
	if _, err := Judge(doc(a, 800), doc(a, 800), JudgeOptions{Metric: packets, Threshold: 0.05, Cells: []string{"kquic/none"}}); err == nil {
		t.Error("a cell neither side has was judged")
	}
}

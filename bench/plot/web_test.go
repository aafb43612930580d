package plot_test

import (
	"slices"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode/h3"
	"kquic.dev/bench/plot"
	"kquic.dev/bench/results"
)

// TestWebWorkloads: an h3 run's download and upload are a goodput figure
// each, named and titled by the workload, one point per size in each
// series; the objects workload (requests per second) is in none.
func TestWebWorkloads(t *testing.T) {
	spec := matrix.Spec{Mode: h3.Name, Transports: []string{h3.QuicGo, h3.H2CryptoTLS},
		Sizes: []int{1 << 20, 4 << 20}, MTUs: []int{1500}, GSO: []bool{true}, Crypto: []bool{true},
		Directions: []matrix.Direction{matrix.Up}, Streams: 1, Conns: []int{1}, Repeat: 2, Time: 1e9,
		Settings: &h3.WebSpec{Workloads: []string{h3.WorkloadDownload, h3.WorkloadUpload, h3.WorkloadObjects}}}
	d := &results.Document{Schema: results.SchemaVersion, Spec: spec, Complete: true}
	workloads := map[string]bool{}
	for _, c := range spec.Cells() {
		workloads[c.Workload] = true
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		for i := range 2 {
			bps := float64(100+i) * 1e6
			r.Samples = append(r.Samples, results.Sample{Bytes: int64(bps / 8), Seconds: 1, Bps: bps, CPU: results.CPU{BusyCores: 1}})
		}
		r.Summarize()
		d.Cells = append(d.Cells, r)
	}
	if len(workloads) != 3 {
		t.Fatalf("the spec's cells have workloads %v, want download, upload and objects", workloads)
	}
	var names []string
	for _, f := range plot.Goodput(d) {
		names = append(names, f.Name)
		for _, p := range f.Panels {
			for _, s := range p.Series {
				var xs []float64
				for _, pt := range s.Points {
					xs = append(xs, pt.X)
					r, _ := d.Lookup(cellOf(t, d, pt.Cell))
					if want := f.Name[len("goodput-"):]; r.Workload != want {
						t.Errorf("figure %s has the %s cell %s", f.Name, r.Workload, pt.Cell)
					}
				}
				if !slices.Equal(xs, []float64{1 << 20, 4 << 20}) {
					t.Errorf("figure %s, series %s at sizes %v: want one point per size", f.Name, s.Label, xs)
				}
			}
		}
	}
	if !slices.Equal(names, []string{"goodput-upload", "goodput-download"}) {
		t.Errorf("goodput figures %v, want upload (client to server, first) and download", names)
	}
}

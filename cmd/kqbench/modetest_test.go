//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"kquic.dev/bench"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/render"
	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
	"kquic.dev/bench/transport"
)

// The "echo" mode is registered here, in this one file, as a mode's folder
// registers its parts: a spec with a flag of its own and settings saved in
// the spec (--levels), its cells and keys; a payload per sample and cell
// with compare's metric and figures; tables and a CSV column; and its
// measuring, whose samples are made up (count = level x 10 + the sample's
// index x step, step given by --step). Nothing outside this file knows it.

// echoName is the test mode's name.
const echoName = matrix.Mode("echo")

// echoSettings are the mode's own part of a spec.
type echoSettings struct {
	Levels []int `json:"levels"`
	Step   int   `json:"step"`
}

// echoSample and echoSummary are the mode's payloads.
type echoSample struct {
	Count int `json:"count"`
}

type echoSummary struct {
	Total int `json:"total"`
}

func (*echoSample) PayloadKey() string  { return "echo" }
func (*echoSummary) PayloadKey() string { return "echo" }

func init() {
	if err := matrix.RegisterModeSpec(echoName, matrix.ModeSpec{
		About: "made-up counts at each of --levels",
		Flags: []matrix.Flag{{Name: "levels", Default: "1", List: true, Usage: "the levels echoed"}, {Name: "step", Default: "1", Usage: "what each sample adds"}},
		Apply: func(s *matrix.Spec, f matrix.Flags) error {
			ls, err := matrix.ParseCounts(f.List("levels"), "--levels")
			if err != nil {
				return err
			}
			step, err := strconv.Atoi(f.Value("step"))
			if err != nil {
				return fmt.Errorf("--step: %w", err)
			}
			s.Settings = &echoSettings{Levels: ls, Step: step}
			return nil
		},
		Validate: func(s *matrix.Spec) []error {
			errs := s.CheckCommon()
			if st, _ := s.Settings.(*echoSettings); st == nil || len(st.Levels) == 0 {
				errs = append(errs, errors.New("echo: no levels"))
			}
			return errs
		},
		Cells: func(s *matrix.Spec) []matrix.Cell {
			var out []matrix.Cell
			for _, l := range s.Settings.(*echoSettings).Levels {
				for _, c := range s.DefaultCells() {
					c.Mode, c.Workload = echoName, "level"+strconv.Itoa(l)
					out = append(out, c)
				}
			}
			return out
		},
		Key: func(c matrix.Cell) string {
			return fmt.Sprintf("%s/echo/%s/size=%d/mtu=%d", c.Transport, c.Workload, c.Size, c.MTU)
		},
		Settings: &matrix.SettingsType{Key: "echo", New: func() any { return &echoSettings{} }},
	}); err != nil {
		panic(err)
	}
	results.RegisterPayload(results.PayloadType{
		Key:    "echo",
		Sample: func() results.Payload { return &echoSample{} },
		Cell:   func() results.Payload { return &echoSummary{} },
		Summarize: func(r *results.CellResult) {
			sum := &echoSummary{}
			for _, s := range r.Samples {
				sum.Total += s.Payload.(*echoSample).Count
			}
			r.Payload = sum
		},
		Metric:  func(p results.Payload) (string, float64) { return "counts", float64(p.(*echoSample).Count) },
		Unit:    "counts",
		Figures: []results.Figure{{Name: "counts x2", Value: func(p results.Payload) float64 { return 2 * float64(p.(*echoSample).Count) }}},
	})
	render.RegisterView(echoName, render.View{
		Tables: func(w io.Writer, d *results.Document) error {
			fmt.Fprintln(w, "Echo: total count per cell")
			for _, c := range d.Cells {
				if sum, ok := c.Payload.(*echoSummary); ok {
					fmt.Fprintf(w, "%s %s: %d\n", c.Transport, c.Workload, sum.Total)
				}
			}
			return nil
		},
		Columns: &render.Columns{Head: []string{"echo_total"}, Row: func(c results.CellResult) []string {
			if sum, ok := c.Payload.(*echoSummary); ok {
				return []string{strconv.Itoa(sum.Total)}
			}
			return []string{""}
		}},
	})
	mode.Register(echoMode{mode.Common{Mode: echoName}})
}

// echoMode measures nothing: its samples are made up.
type echoMode struct{ mode.Common }

func (echoMode) Check(*mode.Env, matrix.Cell) (results.Status, string) { return "", "" }

func (echoMode) Sample(_ context.Context, env *mode.Env, c matrix.Cell, i int) (results.Sample, error) {
	level, _ := strconv.Atoi(strings.TrimPrefix(c.Workload, "level"))
	n := level*10 + i*env.Spec.Settings.(*echoSettings).Step
	return results.Sample{Bytes: int64(n), Seconds: 1, Bps: float64(8 * n), Streams: 1, Payload: &echoSample{Count: n}}, nil
}

func (echoMode) Summary(r *results.CellResult) string { return mode.GoodputSummary(r) }

// echoEnds are the ends of a run that needs no network: two-host mode with
// nothing behind it.
type echoClient struct{}

func (echoClient) Prepare(int, bool) (string, string, error) { return "no device", "", nil }
func (echoClient) Do(fn func() error) error                  { return fn() }

type echoServer struct{}

func (echoServer) Prepare(context.Context, int, bool) (string, error) { return "no peer", nil }
func (echoServer) Available(string) error                             { return nil }
func (echoServer) Certificate() []byte                                { return nil }
func (echoServer) Listen(context.Context, string, transport.Options, int) (side.ServerSample, error) {
	return nil, errors.New("the echo mode listens nowhere")
}

// echoRun makes kqbench matrix's spec of args, as the command does, runs
// it between the ends that need no network, and prints it as the command
// does; it returns the results file and what was printed.
func echoRun(t *testing.T, dir string, args ...string) (string, string) {
	t.Helper()
	m := &matrixFlags{spec: matrix.DefaultSpec()}
	cmd := &cobra.Command{Use: "matrix"}
	m.register(cmd)
	out := filepath.Join(dir, fmt.Sprintf("echo-%d.json", len(args)))
	if err := cmd.ParseFlags(append(args, "--out", out)); err != nil {
		t.Fatal(err)
	}
	if err := m.check(cmd); err != nil {
		t.Fatal(err)
	}
	r := &bench.Runner{Spec: m.spec, Out: out, Client: echoClient{}, Server: echoServer{}, Topology: "none"}
	doc, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := printMatrix(&w, doc, matrixOutput{out: out, csv: m.csvOut}); err != nil {
		t.Fatal(err)
	}
	return out, w.String()
}

// TestModeFromOneFile: a mode registered from one file gets its flags
// (with --mode in the help, its own refused beside another mode), its
// settings and cells, a run that saves its payloads, its table and CSV
// column, and a compare by its metric and figures, end to end through
// kqbench's commands.
func TestModeFromOneFile(t *testing.T) {
	cmd := newMatrixCmd()
	if u := cmd.Flags().Lookup("mode").Usage; !strings.Contains(u, "echo (made-up counts at each of --levels)") {
		t.Errorf("--mode's help: %s", u)
	}
	if p := cmd.Flags().Lookup("levels"); p == nil || p.Usage != "echo: the levels echoed" {
		t.Fatalf("--levels: %+v", p)
	}
	m := &matrixFlags{spec: matrix.DefaultSpec()}
	bulk := &cobra.Command{}
	m.register(bulk)
	bulk.ParseFlags([]string{"--levels", "2", "--transports", "tcp", "--out", filepath.Join(t.TempDir(), "x.json")})
	if err := m.check(bulk); err == nil || !strings.Contains(err.Error(), "--levels is for --mode echo") {
		t.Errorf("--levels in the default mode: %v", err)
	}

	dir := t.TempDir()
	common := []string{"--mode", "echo", "--levels", "2,5", "--transports", "tcp", "--sizes", "1K", "--mtus", "1500", "--gso", "on", "--crypto", "off", "--repeat", "5", "--time", "1s", "--warmup", "0s"}
	old, printed := echoRun(t, dir, common...)
	for _, want := range []string{"Echo: total count per cell", "tcp level2: 110", "tcp level5: 260", "results: " + old} {
		if !strings.Contains(printed, want) {
			t.Errorf("matrix printed no %q:\n%s", want, printed)
		}
	}
	doc, err := results.Load(old)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := doc.Spec.Settings.(*echoSettings); !ok || len(st.Levels) != 2 || len(doc.Cells) != 2 || doc.Cells[1].Key != "tcp/echo/level5/size=1024/mtu=1500" {
		t.Fatalf("read back: settings %#v, cells %+v", doc.Spec.Settings, doc.Cells)
	}

	csvPath := filepath.Join(dir, "again.csv")
	if out, err := run(t, "report", "--csv", csvPath, old); err != nil || !strings.Contains(out, "tcp level5: 260") {
		t.Fatalf("report: %v\n%s", err, out)
	}
	csv, err := os.ReadFile(csvPath)
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); err != nil || len(lines) != 3 || !strings.HasSuffix(lines[0], ",echo_total") || !strings.HasSuffix(lines[2], ",260") {
		t.Errorf("CSV:\n%s", csv)
	}

	new, _ := echoRun(t, dir, append(common, "--step", "3")...)
	out, err := run(t, "compare", old, new)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	for _, want := range []string{"old counts", "tcp/echo/level2/size=1024/mtu=1500", "  counts x2"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	t.Logf("matrix:\n%s\ncompare:\n%s", printed, out)
	js, err := run(t, "compare", "--format", "json", old, new)
	if err != nil || !strings.Contains(js, `"echo": [`) || !strings.Contains(js, `"name": "counts"`) {
		t.Errorf("compare --format json (%v):\n%s", err, js)
	}
}

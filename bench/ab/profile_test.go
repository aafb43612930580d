//go:build linux

package ab

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kquic.dev/bench/flame"
	"kquic.dev/bench/matrix"
	"kquic.dev/bench/profile"
	"kquic.dev/bench/results"
)

// profiledSide writes, as kqbench matrix --profile does, a results file
// whose cell names its folded stacks, relative to the file's directory.
func profiledSide(name string, stacks flame.Folded) Side {
	return Side{Name: name, Run: func(_ context.Context, round int, out string) error {
		c := matrix.Cell{Transport: "kquic", Size: 1024, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1}
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		for i := 0; i < 3; i++ {
			r.Samples = append(r.Samples, results.Sample{Bps: float64(100+i) * 1e6, Bytes: 1e6})
		}
		dir := strings.TrimSuffix(out, ".json")
		prof := filepath.Join(dir, "profiles", profile.FileName(c))
		if err := os.MkdirAll(filepath.Dir(prof), 0o755); err != nil {
			return err
		}
		if err := stacks.WriteFile(prof); err != nil {
			return err
		}
		r.Profile, _ = filepath.Rel(filepath.Dir(out), prof)
		d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Sizes: []int{1024}, Repeat: 3, Streams: 1}, Cells: []results.CellResult{r}}
		return d.Save(out)
	}}
}

func TestRunProfile(t *testing.T) {
	dir := t.TempDir()
	a := profiledSide("A", flame.Folded{"kqbench;quic_sendmsg_[k]": 10, "kqbench;quic_recvmsg_[k]": 10})
	b := profiledSide("B", flame.Folded{"kqbench;quic_sendmsg_[k]": 30, "kqbench;quic_recvmsg_[k]": 10})
	res, err := Run(context.Background(), a, b, Options{Rounds: 2, Dir: dir, Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flames) != 1 {
		t.Fatalf("%d flamegraphs, want 1: %+v", len(res.Flames), res.Flames)
	}
	fl := res.Flames[0]
	if fl.SamplesA != 40 || fl.SamplesB != 80 {
		t.Errorf("merged %d and %d samples, want the two rounds' 40 and 80", fl.SamplesA, fl.SamplesB)
	}
	fa, err := flame.ReadFoldedFile(fl.A)
	if err != nil {
		t.Fatal(err)
	}
	if fa["kqbench;quic_sendmsg_[k]"] != 20 {
		t.Errorf("A's merged stacks: %v", fa)
	}
	svg, err := os.ReadFile(fl.Diff)
	if err != nil {
		t.Fatal(err)
	}
	// sendmsg: half of A, three quarters of B: red; recvmsg: blue.
	for name, colour := range map[string]string{"quic_sendmsg_[k]": `rgb\(255,0,0\)`, "quic_recvmsg_[k]": `rgb\(0,0,255\)`} {
		re := regexp.MustCompile(`<title>` + regexp.QuoteMeta(name) + ` \(A \d+ samples[^<]*</title><rect [^>]*fill="` + colour + `"`)
		if !re.Match(svg) {
			t.Errorf("%s is not drawn in %s in %s", name, colour, fl.Diff)
		}
	}
}

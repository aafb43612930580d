//go:build linux

package ab

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/results"
)

func TestOrder(t *testing.T) {
	if got, want := Order(4), []int{0, 1, 1, 0, 0, 1, 1, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("Order(4) = %v, want ABBA ABBA %v", got, want)
	}
	if got := Order(1); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("Order(1) = %v", got)
	}
}

// fakeSide writes a results file with one cell whose samples are mean
// plus a drift that grows with every round of either side, as a machine
// that slows down: ABBA spreads the drift over both sides alike.
func fakeSide(name string, mean float64, clock *int) Side {
	return Side{Name: name, Run: func(_ context.Context, round int, out string) error {
		*clock++
		c := matrix.Cell{Transport: "kquic", Size: 1024, MTU: 1500, GSO: true, Crypto: true, Direction: "up", Streams: 1}
		r := results.CellResult{Cell: c, Key: c.Key(), Status: results.StatusOK}
		for i := 0; i < 3; i++ {
			v := mean - float64(*clock)*2 + float64(i)*0.5
			r.Samples = append(r.Samples, results.Sample{Bps: v * 1e6, Bytes: 1e6})
		}
		d := &results.Document{Schema: results.SchemaVersion, Spec: matrix.Spec{Sizes: []int{1024}, Repeat: 3, Streams: 1}, Cells: []results.CellResult{r}}
		return d.Save(out)
	}}
}

// TestRunSameBuild: two sides of the same build, on a machine that drifts,
// show no significant difference; and a real one shows.
func TestRunSameBuild(t *testing.T) {
	clock := 0
	res, err := Run(context.Background(), fakeSide("A", 100, &clock), fakeSide("B", 100, &clock), Options{Rounds: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Order, ""); got != "ABBAABBA" {
		t.Errorf("order %s", got)
	}
	if n := len(res.A.Cells[0].Samples); n != 12 {
		t.Errorf("side A merged %d samples, want 12", n)
	}
	if d := res.Comparison.Cells[0].Goodput; d.Significant {
		t.Errorf("the same build on a drifting machine: %+v, want no significant difference", d)
	}
	clock = 0
	res, err = Run(context.Background(), fakeSide("A", 100, &clock), fakeSide("B", 110, &clock), Options{Rounds: 4, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Comparison.Cells[0].Goodput; !d.Significant || d.ChangePct < 5 {
		t.Errorf("B 10%% faster: %+v", d)
	}
}

// TestRunPartial: a side whose round fails (its guest did not boot) ends
// the rounds with an error naming the side and round, and the rounds both
// sides finished are still compared; a side that never ran gives only the
// error.
func TestRunPartial(t *testing.T) {
	clock := 0
	b := fakeSide("B", 100, &clock)
	ok := b.Run
	b.Run = func(ctx context.Context, round int, out string) error {
		if round == 3 {
			return errors.New("the guest did not boot")
		}
		return ok(ctx, round, out)
	}
	closed := 0
	b.Close = func() error { closed++; return nil }
	res, err := Run(context.Background(), fakeSide("A", 100, &clock), b, Options{Rounds: 4, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "side B, round 3: the guest did not boot") {
		t.Fatalf("err = %v, want side B's round 3 named", err)
	}
	if res == nil || res.Comparison == nil || len(res.Comparison.Cells) != 1 {
		t.Fatalf("result %+v: the finished rounds were not compared", res)
	}
	if got := strings.Join(res.Order, ""); got != "ABBAA" {
		t.Errorf("rounds that finished: %s, want ABBAA", got)
	}
	if closed != 1 {
		t.Errorf("side B closed %d times, want once", closed)
	}
	b.Run = func(context.Context, int, string) error { return errors.New("no kernel") }
	res, err = Run(context.Background(), fakeSide("A", 100, &clock), b, Options{Rounds: 2, Dir: t.TempDir()})
	if res != nil || err == nil || !strings.Contains(err.Error(), "side B, round 1: no kernel") {
		t.Errorf("a side that never ran: %+v, %v", res, err)
	}
}

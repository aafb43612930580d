// Package ab runs an A/B comparison of two builds - two QUIC modules, two
// kernels - as one command: the same matrix measured on side A and side B
// in alternating rounds (A B B A A B B A ...), so that a drift of the
// machine over the run falls on both sides alike, then the rounds of each
// side merged and the two compared cell by cell (results.Compare).
//
// What a side is - a guest booted with one module, a host after a reboot -
// is the caller's: a Side runs one round of the matrix and writes its
// results file. A [Guest] keeps a side's guest booted between rounds, so a
// round can be one sample of each cell and the sides alternate sample by
// sample.
package ab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"kquic.dev/bench/results"
)

// Side is one of the two builds compared.
type Side struct {
	// Name labels the side ("A", "B", or what the user calls them).
	Name string
	// Run measures one round and writes its results file to out.
	Run func(ctx context.Context, round int, out string) error
	// Close, if set, is called once when the run ends: a side kept up
	// between rounds (a [Guest]) goes down.
	Close func() error
}

// Options configures Run.
type Options struct {
	// Rounds is how many rounds each side runs (default 4).
	Rounds int
	// Dir receives every round's results file and the merged ones.
	Dir string
	// Compare configures the comparison.
	Compare results.CompareOptions
	// Log receives a line per round (default: discarded).
	Log io.Writer
	// Profile says the rounds were run with kqbench matrix --profile: each
	// side's folded stacks are merged cell by cell and a differential
	// flamegraph of B against A drawn (Result.Flames).
	Profile bool
}

// Result is a finished A/B run.
type Result struct {
	// Order is the sides' names in the order their rounds ran.
	Order []string
	// A and B are each side's rounds merged: every sample of a cell.
	A, B *results.Document
	// Comparison compares B against A.
	Comparison *results.Comparison
	// Flames are the cells' merged profiles and differential flamegraphs
	// (with Options.Profile).
	Flames []Flame
}

// Order is the ABBA sequence of n rounds per side: A B B A A B B A ...
func Order(n int) []int {
	var out []int
	for i := 0; len(out) < 2*n; i++ {
		if i%2 == 0 {
			out = append(out, 0, 1)
		} else {
			out = append(out, 1, 0)
		}
	}
	return out[:2*n]
}

// Run runs the rounds of both sides in ABBA order, merges each side's
// results and compares them. A round that fails ends the rounds: if both
// sides finished one or more, those are merged and compared, and Run
// returns the Result with the round's error; else only the error.
func Run(ctx context.Context, a, b Side, o Options) (*Result, error) {
	if o.Rounds <= 0 {
		o.Rounds = 4
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	sides := []Side{a, b}
	defer func() {
		for _, s := range sides {
			if s.Close != nil {
				if err := s.Close(); err != nil {
					fmt.Fprintf(o.Log, "ab: side %s at the end: %v\n", s.Name, err)
				}
			}
		}
	}()
	docs := [2][]*results.Document{}
	var roundErr error
	var rounds [2][]round
	res := &Result{}
	count := [2]int{}
	for _, s := range Order(o.Rounds) {
		side := sides[s]
		count[s]++
		out := filepath.Join(o.Dir, fmt.Sprintf("%s-%d.json", side.Name, count[s]))
		fmt.Fprintf(o.Log, "ab: %s round %d of %d -> %s\n", side.Name, count[s], o.Rounds, out)
		err := side.Run(ctx, count[s], out)
		var d *results.Document
		if err == nil {
			d, err = results.Load(out)
		}
		if err != nil {
			roundErr = fmt.Errorf("ab: side %s, round %d: %w", side.Name, count[s], err)
			break
		}
		docs[s] = append(docs[s], d)
		rounds[s] = append(rounds[s], round{d, out})
		res.Order = append(res.Order, side.Name)
	}
	if len(docs[0]) == 0 || len(docs[1]) == 0 {
		if roundErr == nil {
			roundErr = errors.New("ab: no round ran")
		}
		return nil, roundErr
	}
	if roundErr != nil {
		// What was measured is still compared, and said to be partial.
		fmt.Fprintf(o.Log, "%v; comparing the %d and %d rounds that finished\n", roundErr, len(docs[0]), len(docs[1]))
	}
	res.A, res.B = Merge(docs[0]), Merge(docs[1])
	for i, d := range []*results.Document{res.A, res.B} {
		if err := d.Save(filepath.Join(o.Dir, sides[i].Name+".json")); err != nil {
			return nil, fmt.Errorf("ab: %w", err)
		}
	}
	var flameErr error
	if o.Profile {
		res.Flames, flameErr = writeFlames(o.Dir, [2]string{a.Name, b.Name}, rounds)
	}
	c, err := results.Compare(res.A, res.B, o.Compare)
	res.Comparison = c
	if err != nil {
		return res, errors.Join(roundErr, fmt.Errorf("ab: %w", err), flameErr)
	}
	return res, errors.Join(roundErr, flameErr)
}

// Merge joins rounds of one side: each cell's samples from every round, in
// order, summarized again. The environment and spec are the first round's.
func Merge(rounds []*results.Document) *results.Document {
	if len(rounds) == 0 {
		return nil
	}
	m := *rounds[0]
	m.Cells = nil
	index := map[string]int{}
	for _, d := range rounds {
		for _, c := range d.Cells {
			i, ok := index[c.Key]
			if !ok {
				index[c.Key] = len(m.Cells)
				m.Cells = append(m.Cells, c)
				continue
			}
			have := &m.Cells[i]
			if have.Status != results.StatusOK || c.Status != results.StatusOK {
				if have.Status == results.StatusOK {
					*have = c // a failed round fails the cell
				}
				continue
			}
			have.Samples = append(have.Samples, c.Samples...)
		}
	}
	for i := range m.Cells {
		m.Cells[i].Summarize()
	}
	m.Spec.Repeat *= len(rounds)
	return &m
}

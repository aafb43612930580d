package fuzz

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"kquic.dev/conformance"
	"kquic.dev/internal/jsonfile"
)

// ReproSchema names a reproducer's finding.json.
const ReproSchema = "kqbench.fuzz.repro/v1"

// ReproEnv names a directory of reproducers for TestReproducers to replay
// instead of testdata/repro.
const ReproEnv = "KQUIC_FUZZ_REPRO"

// Reproducer is a finding made replayable: a directory with finding.json
// (this), inputs.jsonl (the inputs, which `kqbench fuzz --replay` takes too)
// and kernel.log (what the oracle saw). The package's TestReproducers
// replays every reproducer under testdata/repro (or $KQUIC_FUZZ_REPRO): copy
// the directory there and the finding is a regression test, failing while
// it comes back.
type Reproducer struct {
	Schema string `json:"schema"`
	// Target and Roles are what was fuzzed ("kquic", server and client).
	Target string             `json:"target"`
	Roles  []conformance.Role `json:"roles"`
	// Seed and Module identify the run that found it.
	Seed   uint64 `json:"seed"`
	Module string `json:"module,omitempty"`
	// Oracle and Detail are the finding's.
	Oracle string `json:"oracle"`
	Detail string `json:"detail"`
	// Inputs counts the inputs; Narrowed says whether they are the
	// shortest tail that brought the finding back in a fresh guest.
	Inputs   int  `json:"inputs"`
	Narrowed bool `json:"narrowed"`
	// Dir is where it was read from.
	Dir string `json:"-"`
}

// WriteReproducer writes a finding's reproducer into dir: finding.json
// (r, with the finding's oracle and detail), inputs.jsonl and kernel.log.
func WriteReproducer(dir string, r Reproducer, inputs []Input, f *Finding) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fuzz: reproducer: %w", err)
	}
	if err := writeInputs(filepath.Join(dir, "inputs.jsonl"), inputs); err != nil {
		return err
	}
	var b []byte
	b = append(b, fmt.Sprintf("%s: %s\n", f.Oracle, f.Detail)...)
	for _, l := range f.Lines {
		b = append(b, l+"\n"...)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.log"), b, 0o644); err != nil {
		return fmt.Errorf("fuzz: reproducer: %w", err)
	}
	r.Schema, r.Oracle, r.Detail, r.Inputs = ReproSchema, f.Oracle, f.Detail, len(inputs)
	if err := jsonfile.Save(filepath.Join(dir, "finding.json"), r); err != nil {
		return fmt.Errorf("fuzz: reproducer: %w", err)
	}
	return nil
}

// LoadReproducer reads the reproducer in dir.
func LoadReproducer(dir string) (*Reproducer, []Input, error) {
	var r Reproducer
	if err := jsonfile.Load(filepath.Join(dir, "finding.json"), &r, ReproSchema); err != nil {
		return nil, nil, fmt.Errorf("fuzz: reproducer %s: %w", dir, err)
	}
	inputs, err := ReadLog(filepath.Join(dir, "inputs.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if len(inputs) == 0 {
		return nil, nil, fmt.Errorf("fuzz: reproducer %s has no inputs", dir)
	}
	r.Dir = dir
	return &r, inputs, nil
}

// FindReproducers returns the directories under root that hold a
// reproducer (a finding.json), sorted; none when root does not exist.
func FindReproducers(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if !d.IsDir() && d.Name() == "finding.json" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs, err
}

// Replay sends a reproducer's inputs to its target again, watching the
// kernel log with k (nil: no kernel oracle) and leaks with leaks (nil:
// none), and returns the finding of the reproducer's oracle if it came
// back, with the run's report.
func Replay(ctx context.Context, r *Reproducer, inputs []Input, k Watcher, leaks LeakCheck) (*Finding, *Report, error) {
	t, err := conformance.Open(r.Target)
	if err != nil {
		return nil, nil, fmt.Errorf("fuzz: replay %s: %w", r.Dir, err)
	}
	roles := r.Roles
	if len(roles) == 0 {
		roles = []conformance.Role{conformance.Server}
	}
	rep, err := Run(ctx, Options{Target: t, Roles: roles, Replay: inputs, Kernel: k, Leaks: leaks})
	if rep == nil {
		return nil, nil, err
	}
	for i := range rep.Findings {
		if rep.Findings[i].Oracle == r.Oracle {
			return &rep.Findings[i], rep, nil
		}
	}
	return nil, rep, err
}

// replayTimeout bounds a replay of a reproducer: a few handshakes per batch
// of inputs, slow under qemu's emulation.
func replayTimeout(inputs int) time.Duration {
	return 2*time.Minute + time.Duration(inputs)*time.Second
}

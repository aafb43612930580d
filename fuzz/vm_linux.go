package fuzz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"kquic.dev/kmod/kcov"
	"kquic.dev/kmod/vm"
)

// GuestRun is a fuzz command run in a guest: args is the kqbench command
// line to run there; it must log its inputs to Log and write its report to
// Out, both in a directory the guest shares.
type GuestRun struct {
	Config vm.Config
	Args   []string
	Log    string
	Out    string
}

// RunGuest runs the command in a guest and returns its report. A guest that
// dies or stops answering is a finding (oracle "guest") with the kernel's
// console and the inputs logged before it; the report then counts what the
// log holds.
func RunGuest(ctx context.Context, g GuestRun) (*Report, error) {
	_, err := vm.Run(ctx, g.Config, g.Args)
	rep, lerr := Load(g.Out)
	var ge *vm.GuestError
	died := errors.As(err, &ge) || (err != nil && ctx.Err() == nil && lerr != nil && !isExit(err))
	if !died {
		if lerr != nil {
			return nil, errors.Join(err, lerr)
		}
		return rep, err
	}
	inputs, _ := ReadLog(g.Log)
	if rep == nil {
		rep = &Report{Schema: Schema, Inputs: len(inputs)}
	}
	f := Finding{Oracle: "guest", Detail: err.Error(), After: -1}
	if ge != nil {
		f.Detail, f.Lines = ge.Msg, ge.Console
	}
	if n := len(inputs); n > 0 {
		f.After = inputs[n-1].Seq
		f.Window = inputs[max(0, n-windowSize):]
	}
	rep.Findings = append(rep.Findings, f)
	return rep, nil
}

func isExit(err error) bool {
	var e *vm.ExitError
	return errors.As(err, &e)
}

// Narrow looks for the shortest tail of inputs that brings the finding
// back in a fresh guest: the last 1, 2, 4, ... inputs, each replayed by
// replayArgs(file) (a kqbench fuzz --replay command line). It returns the
// reproducer's inputs and the finding it made, or nil if no tail did.
func Narrow(ctx context.Context, cfg vm.Config, dir string, inputs []Input, oracle string, replayArgs func(in, log, out string) []string) ([]Input, *Finding, error) {
	for n := 1; ; n *= 2 {
		n = min(n, len(inputs))
		tail := inputs[len(inputs)-n:]
		step := filepath.Join(dir, "narrow-"+strconv.Itoa(n))
		if err := os.MkdirAll(step, 0o755); err != nil {
			return nil, nil, err
		}
		in := filepath.Join(step, "inputs.jsonl")
		if err := writeInputs(in, tail); err != nil {
			return nil, nil, err
		}
		log, out := filepath.Join(step, "replayed.jsonl"), filepath.Join(step, "report.json")
		rep, err := RunGuest(ctx, GuestRun{Config: cfg, Args: replayArgs(in, log, out), Log: log, Out: out})
		if err != nil && ctx.Err() != nil {
			return nil, nil, err
		}
		if rep != nil {
			for i := range rep.Findings {
				if rep.Findings[i].Oracle == oracle {
					return tail, &rep.Findings[i], nil
				}
			}
		}
		if n == len(inputs) {
			return nil, nil, nil
		}
	}
}

// VMRun is a fuzz run in a guest with what the host does after it: narrow
// each finding to a reproducer in fresh guests, and map the module's KCOV
// trace to its lines.
type VMRun struct {
	Config vm.Config
	// Dir gets report.json, inputs.jsonl and a finding-N directory per
	// finding with its reproducer (and the narrowing's steps).
	Dir string
	// Command is the guest's fuzz command line without --log and --out;
	// ReplayCommand(in, log, out) replays a log of inputs in the guest.
	Command       []string
	ReplayCommand func(in, log, out string) []string
	// Narrow replays the inputs before a kernel-log or guest finding in
	// fresh guests for the shortest tail that brings it back.
	Narrow bool
	// Repro is the reproducers' description of the run (target, roles,
	// seed).
	Repro Reproducer
	// ModuleFile is the module file the guest loads: a KCOV trace is
	// mapped with it.
	ModuleFile string
	// Progress gets a line per step.
	Progress io.Writer
}

// RunVM runs r and returns the report: findings with their reproducers'
// directories, and the module's coverage when the guest traced it.
func RunVM(ctx context.Context, r VMRun) (*Report, error) {
	progress := r.Progress
	if progress == nil {
		progress = io.Discard
	}
	out, log := filepath.Join(r.Dir, "report.json"), filepath.Join(r.Dir, "inputs.jsonl")
	args := append(slices.Clip(r.Command), "--log", log, "--out", out)
	rep, err := RunGuest(ctx, GuestRun{Config: r.Config, Args: args, Log: log, Out: out})
	if err != nil {
		return nil, err
	}
	if rep.KCOV != nil && r.ModuleFile != "" {
		c, err := kcov.Symbolize(r.ModuleFile, rep.KCOV)
		if err != nil {
			return nil, err
		}
		rep.Coverage = c
	}
	cfg := r.Config
	cfg.Stdout, cfg.Stderr = nil, nil
	for i, f := range rep.Findings {
		if f.Oracle != "guest" && f.Oracle != "kernel-log" {
			continue
		}
		fdir := filepath.Join(r.Dir, fmt.Sprintf("finding-%d", i+1))
		// The inputs up to the last one sent before the finding was seen:
		// what came after cannot have caused it.
		inputs, _ := ReadLog(log)
		if j := slices.IndexFunc(inputs, func(in Input) bool { return in.Seq == f.After }); j >= 0 {
			inputs = inputs[:j+1]
		}
		repro, found, narrowed := inputs, &rep.Findings[i], false
		if r.Narrow && len(inputs) > 0 && r.ReplayCommand != nil {
			fmt.Fprintf(progress, "fuzz: %s finding after input %d: replaying its inputs in fresh guests\n", f.Oracle, f.After)
			tail, nf, err := Narrow(ctx, cfg, fdir, inputs, f.Oracle, r.ReplayCommand)
			if err != nil {
				return nil, err
			}
			if nf != nil {
				repro, found, narrowed = tail, nf, true
				fmt.Fprintf(progress, "fuzz: finding %d reproduces with the last %d inputs\n", i+1, len(tail))
			} else {
				fmt.Fprintf(progress, "fuzz: finding %d did not come back when its inputs were replayed in a fresh guest\n", i+1)
			}
		}
		desc := r.Repro
		desc.Narrowed = narrowed
		if desc.Module == "" {
			desc.Module = rep.Module
		}
		if err := WriteReproducer(fdir, desc, repro, found); err != nil {
			return nil, err
		}
		rep.Findings[i].Reproducer = fdir
	}
	return rep, nil
}

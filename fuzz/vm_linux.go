package fuzz

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

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

func writeInputs(path string, inputs []Input) error {
	l, err := CreateLog(path)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		if err := l.Write(in); err != nil {
			l.Close()
			return err
		}
	}
	return l.Close()
}

// WriteReproducer writes a finding's inputs and kernel log into dir, as
// inputs.jsonl (kqbench fuzz --replay takes it) and kernel.log.
func WriteReproducer(dir string, inputs []Input, f *Finding) error {
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
	return os.WriteFile(filepath.Join(dir, "kernel.log"), b, 0o644)
}

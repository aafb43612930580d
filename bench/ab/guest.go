//go:build linux

package ab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"kquic.dev/kmod/vm"
)

// A Guest is a side kept booted between rounds: one guest runs a worker
// ([Serve]) that takes a round's command line from its standard input and
// answers when the round is done, so rounds of the two sides can alternate
// sample by sample without a boot between them.
type Guest struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	mu   sync.Mutex
	done chan struct{}
	err  error // vm.Run's, once done is closed
}

// reply is the worker's answer to one round.
type reply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// StartGuest boots a guest with cfg running worker, a command that calls
// [Serve] (cfg.Stdin and cfg.Stdout are the guest's: set here). The guest
// runs until Close or ctx ends.
func StartGuest(ctx context.Context, cfg vm.Config, worker []string) *Guest {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	cfg.Stdin, cfg.Stdout = inR, outW
	g := &Guest{in: inW, out: bufio.NewScanner(outR), done: make(chan struct{})}
	g.out.Buffer(make([]byte, 4096), 1<<20)
	go func() {
		_, err := vm.Run(ctx, cfg, worker)
		g.err = err
		inR.CloseWithError(errGuestGone)
		outW.CloseWithError(errGuestGone)
		close(g.done)
	}()
	return g
}

var errGuestGone = errors.New("the guest stopped")

// Round runs one command line (args) in the guest's worker and waits for it
// to finish.
func (g *Guest) Round(args []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	line, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if _, err := g.in.Write(append(line, '\n')); err != nil {
		return g.gone("send the round", err)
	}
	if !g.out.Scan() {
		return g.gone("wait for the round", g.out.Err())
	}
	var r reply
	if err := json.Unmarshal(g.out.Bytes(), &r); err != nil {
		return fmt.Errorf("ab: the guest's worker answered %q, not a round's result: %w", g.out.Text(), err)
	}
	if !r.OK {
		return fmt.Errorf("ab: in the guest: %s", r.Error)
	}
	return nil
}

// gone explains a failed exchange: by the guest's end if it ended.
func (g *Guest) gone(what string, err error) error {
	select {
	case <-g.done:
		if g.err != nil {
			return fmt.Errorf("ab: %s: %w", what, g.err)
		}
		return fmt.Errorf("ab: %s: the guest's worker exited", what)
	default:
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("ab: %s: %w", what, err)
}

// Close ends the worker's input, so it exits and the guest powers off, and
// returns the guest's error, if any.
func (g *Guest) Close() error {
	g.in.Close()
	<-g.done
	return g.err
}

// Serve is the worker's loop in the guest: for each line of r (a JSON array
// of arguments) it calls run and writes one line to w saying how it ended.
// It returns at the end of r.
func Serve(r io.Reader, w io.Writer, run func(args []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var args []string
		var rep reply
		if err := json.Unmarshal(sc.Bytes(), &args); err != nil {
			rep.Error = fmt.Sprintf("a round's line is not a JSON array of arguments: %v", err)
		} else if err := run(args); err != nil {
			rep.Error = err.Error()
		} else {
			rep.OK = true
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return sc.Err()
}

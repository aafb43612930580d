package fuzz

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/conformance"
)

func TestRunQuicGo(t *testing.T) {
	hostOnly(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "inputs.jsonl")
	l, err := CreateLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	g := Generator{Seed: 3, InitialShare: 0.2}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: conformance.QuicGo{}, Roles: []conformance.Role{conformance.Server, conformance.Client},
		Gen: g, Inputs: 300, Batch: 50, Log: l})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Inputs != 300 || rep.PostHandshake+rep.PreHandshake != 300 || rep.PreHandshake == 0 || rep.PostHandshake < 200 ||
		rep.Connections == 0 || rep.Closed == 0 || len(rep.Answers) == 0 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Findings) != 0 {
		t.Fatalf("quic-go made findings: %+v", rep.Findings)
	}
	logged, err := ReadLog(logPath)
	if err != nil || len(logged) != 300 {
		t.Fatalf("the log holds %d inputs, %v", len(logged), err)
	}
	for i, in := range logged {
		if in.Kind == KindInitial && !reflect.DeepEqual(in, g.Input(i)) {
			t.Fatalf("logged Initial %d is not the generator's", i)
		}
	}
	// The log replays.
	again, err := Run(ctx, Options{Target: conformance.QuicGo{}, Replay: logged})
	if err != nil || again.Inputs != 300 || len(again.Findings) != 0 {
		t.Fatalf("replay: %+v, %v", again, err)
	}
}

// stoppable is quic-go whose server stops when told: a target that dies.
type stoppable struct {
	conformance.QuicGo
	mu   sync.Mutex
	stop context.CancelFunc
}

func (s *stoppable) Serve(ctx context.Context, cfg *tls.Config) (string, error) {
	sctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.stop = cancel
	s.mu.Unlock()
	return s.QuicGo.Serve(sctx, cfg)
}

// The liveness oracle fires when the target stops answering, and names the
// inputs before it.
func TestLivenessOracleFires(t *testing.T) {
	hostOnly(t)
	target := &stoppable{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{Target: target, Gen: Generator{Seed: 5}, Inputs: 200, Batch: 20,
		Inject: func(seq int) {
			if seq == 30 {
				target.mu.Lock()
				target.stop()
				target.mu.Unlock()
			}
		}})
	if err == nil && len(rep.Findings) == 0 {
		t.Fatal("a target that stopped went unnoticed")
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Oracle != "liveness" || rep.Findings[0].After < 30 || rep.Findings[0].After > 40 {
		t.Fatalf("findings %+v, want liveness after an input in 30..39", rep.Findings)
	}
	f := rep.Findings[0]
	if len(f.Window) == 0 || f.Window[len(f.Window)-1].Seq != f.After || !strings.Contains(f.Detail, "input") {
		t.Fatalf("finding without its inputs: %+v", f)
	}
	if rep.Inputs >= 200 {
		t.Fatalf("the run went on to the end (%d inputs) against a dead target", rep.Inputs)
	}
}

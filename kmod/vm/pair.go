//go:build linux

package vm

import (
	"context"
	"errors"
	"time"
)

// PairConfig describes two guests joined by a link: guest A runs ArgsA and
// guest B runs ArgsB, each with its own Config (its own kernel, module tree
// and out-of-tree modules, which is how an old client meets a new server).
// Each guest's command finds its end of the link in its environment:
// $KQVM_NAME ("a" or "b"), $KQVM_DEV (the device, "eth0"), $KQVM_ADDR and
// $KQVM_PEER (the two addresses); the peer's name kqvm-a or kqvm-b is in
// /etc/hosts.
type PairConfig struct {
	A, B         Config
	ArgsA, ArgsB []string
	Link         Link
	// PeerGrace is how long guest B's command has to end after it is sent
	// SIGTERM by RunPair, before its guest is stopped (default 10s).
	PeerGrace time.Duration
}

// DefaultPeerGrace is PairConfig.PeerGrace's default.
const DefaultPeerGrace = 10 * time.Second

// A Pair is two guests started by [StartPair], each a [Machine], and the link
// between them, which lasts until both have ended.
type Pair struct {
	A, B *Machine
	link *link
	done chan struct{}
}

// PairResult is how a pair ended: each guest's result (nil for one that
// never started) and the link they had.
type PairResult struct {
	A, B *Result
	Link LinkInfo
}

// StartPair creates the link and boots both guests. Nothing of either is
// left running if it fails.
func StartPair(ctx context.Context, pc PairConfig) (*Pair, error) {
	lk, err := newLink(pc.Link)
	if err != nil {
		return nil, err
	}
	a, err := start(ctx, pc.A, pc.ArgsA, lk.ends[0])
	if err != nil {
		lk.close()
		return nil, err
	}
	b, err := start(ctx, pc.B, pc.ArgsB, lk.ends[1])
	if err != nil {
		a.Stop(0)
		a.Wait()
		lk.close()
		return nil, err
	}
	p := &Pair{A: a, B: b, link: lk, done: make(chan struct{})}
	// Both commands start once both guests are up, so that neither waits
	// for the other's boot; a guest that ends before it is up ends the pair.
	go func() {
		select {
		case <-a.j.ready:
		case <-a.Done():
		}
		select {
		case <-b.j.ready:
		case <-b.Done():
		}
		for _, m := range []*Machine{a, b} {
			select {
			case <-m.Done():
				a.Stop(0)
				b.Stop(0)
				return
			default:
			}
		}
		if err := a.j.send("go"); err != nil {
			a.Stop(0)
		}
		if err := b.j.send("go"); err != nil {
			b.Stop(0)
		}
	}()
	go func() {
		<-a.Done()
		<-b.Done()
		lk.close()
		close(p.done)
	}()
	return p, nil
}

// Link is the link the pair runs with.
func (p *Pair) Link() LinkInfo { return p.link.info }

// Wait waits for both guests to end (and their link to be gone) and returns
// their results; the error joins each guest's, which name the guest.
func (p *Pair) Wait() (*PairResult, error) {
	<-p.done
	ra, ea := p.A.Wait()
	rb, eb := p.B.Wait()
	return &PairResult{A: ra, B: rb, Link: p.link.info}, errors.Join(ea, eb)
}

// Stop stops both guests as [Machine.Stop] does.
func (p *Pair) Stop(grace time.Duration) {
	p.A.Stop(grace)
	p.B.Stop(grace)
}

// RunPair runs a pair whose job is guest A's command, guest B's being its
// peer (a server): when A's command ends, B's is sent SIGTERM and given
// PeerGrace; when guest B fails (its kernel panics, its command fails) while
// A's runs, A's is stopped the same way, as it would wait for a peer that is
// gone. B's command may also end first on its own, and A's goes on. The
// error joins both guests' (a command stopped this way is not an error).
func RunPair(ctx context.Context, pc PairConfig) (*PairResult, error) {
	if pc.PeerGrace == 0 {
		pc.PeerGrace = DefaultPeerGrace
	}
	if pc.B.Timeout == 0 {
		// The peer outlives the job.
		pc.B.Timeout = DefaultTimeout
		if pc.A.Timeout != 0 {
			pc.B.Timeout = pc.A.Timeout
		}
		pc.B.Timeout += pc.PeerGrace + time.Minute
	}
	p, err := StartPair(ctx, pc)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.A.Done():
		p.B.Stop(pc.PeerGrace)
	case <-p.B.Done():
		if _, err := p.B.Wait(); err != nil {
			p.A.Stop(pc.PeerGrace)
		}
	}
	return p.Wait()
}

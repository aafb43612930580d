// Package parked lets a test wait until a call is really waiting - a
// goroutine parked inside it for an event - instead of sleeping and
// assuming it got there: a test of "X wakes a waiting Y" must start Y, see
// it wait, then do X.
package parked

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Timeout is how long Wait waits.
const Timeout = 30 * time.Second

// waiting are the states of a goroutine waiting for an event, as
// runtime.Stack prints them: the network poller, a select, a channel, a
// sync.Cond, a blocking system call. Not a mutex: that is no event.
var waiting = []string{"IO wait", "select", "select (no cases)", "chan receive", "chan send", "chan receive (nil chan)", "chan send (nil chan)", "sync.Cond.Wait", "syscall"}

// Wait waits until, for each of funcs (a function as runtime.Stack names
// it: "kquic.dev/kquic.(*Stream).Read"), some goroutine with that function
// on its stack is parked waiting for an event: in the network poller, a
// select, a channel operation, a sync.Cond or a blocking system call. After
// Timeout it fails the test with the goroutines' stacks. Call it from the
// test's goroutine. Where other goroutines may wait in the same function
// (a peer's loop), start the one to watch with Go.
func Wait(t testing.TB, funcs ...string) {
	t.Helper()
	wait(t, "", funcs)
}

// G is a goroutine started by Go.
type G struct {
	id string // "goroutine 18", as runtime.Stack heads its stack
}

// Go runs f in a new goroutine, to be watched with G.Wait.
func Go(f func()) *G {
	ids := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		head, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), " [")
		ids <- head
		f()
	}()
	return &G{id: <-ids}
}

// Wait waits until g is parked waiting for an event with each of funcs on
// its stack, as the function Wait does for any goroutine.
func (g *G) Wait(t testing.TB, funcs ...string) {
	t.Helper()
	wait(t, g.id, funcs)
}

func wait(t testing.TB, id string, funcs []string) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	pause := 100 * time.Microsecond
	for {
		stacks := all()
		missing := ""
		for _, f := range funcs {
			if !parkedIn(stacks, id, f) {
				missing = f
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			who := "no goroutine"
			if id != "" {
				who = id + " is not"
			}
			t.Fatalf("%s waiting in %s after %v; the goroutines:\n%s", who, missing, Timeout, stacks)
		}
		time.Sleep(pause) // a poll's pace: runtime.Stack stops the world
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// Parked reports whether some goroutine with fn on its stack is parked
// waiting for an event.
func Parked(fn string) bool { return parkedIn(all(), "", fn) }

func all() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parkedIn looks for fn in the stacks of the goroutines of a waiting state
// (of goroutine id only, unless it is "").
func parkedIn(stacks, id, fn string) bool {
	for _, g := range strings.Split(stacks, "\n\n") {
		head, frames, _ := strings.Cut(g, "\n")
		if id != "" && !strings.HasPrefix(head, id+" [") || !waitingState(head) {
			continue
		}
		for _, line := range strings.Split(frames, "\n") {
			if strings.HasPrefix(line, fn+"(") {
				return true
			}
		}
	}
	return false
}

// waitingState reads a "goroutine 7 [IO wait, 2 minutes]:" line.
func waitingState(head string) bool {
	_, st, ok := strings.Cut(head, " [")
	if !ok {
		return false
	}
	st, _, _ = strings.Cut(strings.TrimSuffix(st, "]:"), ",")
	for _, w := range waiting {
		if st == w {
			return true
		}
	}
	return false
}

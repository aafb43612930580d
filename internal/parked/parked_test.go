package parked

import (
	"os"
	"testing"
)

//go:noinline
func receiveOn(ch chan int) int { return <-ch }

//go:noinline
func readFrom(f *os.File) { f.Read(make([]byte, 1)) }

//go:noinline
func spin(stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
	}
}

const pkg = "kquic.dev/internal/parked."

func TestWait(t *testing.T) {
	if Parked(pkg + "receiveOn") {
		t.Fatal("parked in receiveOn before any goroutine called it")
	}
	ch := make(chan int)
	go receiveOn(ch)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go readFrom(r) // a pipe is in the poller: IO wait
	Wait(t, pkg+"receiveOn", pkg+"readFrom")
	ch <- 1
	w.Write([]byte{1})

	// A goroutine that runs in the function is not parked in it.
	stop := make(chan struct{})
	defer close(stop)
	go spin(stop)
	for range 100 {
		if Parked(pkg + "spin") {
			t.Fatal("a spinning goroutine reads as parked")
		}
	}
}

func TestWaitingState(t *testing.T) {
	for head, want := range map[string]bool{
		"goroutine 7 [IO wait]:":                        true,
		"goroutine 7 [IO wait, 2 minutes]:":             true,
		"goroutine 7 [select]:":                         true,
		"goroutine 7 [chan receive, locked to thread]:": true,
		"goroutine 7 [sync.Cond.Wait]:":                 true,
		"goroutine 7 [running]:":                        false,
		"goroutine 7 [runnable]:":                       false,
		"goroutine 7 [sync.Mutex.Lock]:":                false,
		"goroutine 7 [sleep]:":                          false,
	} {
		if got := waitingState(head); got != want {
			t.Errorf("%q: %v, want %v", head, got, want)
		}
	}
}

// G.Wait watches its own goroutine: another parked in the same function
// does not count.
func TestGoWait(t *testing.T) {
	other := make(chan int)
	go receiveOn(other)
	defer close(other)
	Wait(t, pkg+"receiveOn")
	release, ch := make(chan struct{}), make(chan int)
	g := Go(func() {
		<-release
		receiveOn(ch)
	})
	if parkedIn(all(), g.id, pkg+"receiveOn") {
		t.Fatal("the goroutine reads as parked in receiveOn before it called it")
	}
	close(release)
	g.Wait(t, pkg+"receiveOn")
	ch <- 1
}

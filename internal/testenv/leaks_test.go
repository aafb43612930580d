package testenv

import (
	"strings"
	"testing"
	"time"
)

// parkInTestenv blocks until release closes, with this package on its stack.
func parkInTestenv(started chan<- struct{}, release <-chan struct{}) {
	close(started)
	<-release
}

func TestLeakedGoroutines(t *testing.T) {
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { parkInTestenv(started, release); close(done) }()
	<-started
	leaked := LeakedGoroutines(200*time.Millisecond, "testenv.parkInTestenv")
	if !strings.Contains(leaked, "parkInTestenv") {
		t.Fatalf("a parked goroutine was not reported; got %q", leaked)
	}
	close(release)
	<-done
	if leaked := LeakedGoroutines(5*time.Second, "testenv.parkInTestenv"); leaked != "" {
		t.Errorf("an ended goroutine was reported: %s", leaked)
	}
}

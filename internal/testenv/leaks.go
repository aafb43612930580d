package testenv

import (
	"runtime"
	"strings"
	"time"
)

// QUICGoroutines are the packages whose goroutines LeakedGoroutines looks
// for: quic-go's and this project's QUIC layers.
var QUICGoroutines = []string{"quic-go/quic-go", "kquic.dev/kquic", "kquic.dev/quicnet"}

// LeakedGoroutines waits up to d for every goroutine whose stack names one
// of pkgs to end, and returns the stacks of those still running then ("" if
// none). A TestMain calls it after m.Run to fail a run that leaks.
func LeakedGoroutines(d time.Duration, pkgs ...string) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for i, g := range strings.Split(string(buf), "\n\n") {
			if i == 0 { // the calling goroutine
				continue
			}
			for _, p := range pkgs {
				if strings.Contains(g, p) {
					leaked = append(leaked, g)
					break
				}
			}
		}
		if len(leaked) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

//go:build linux

package vm

import (
	"strings"
	"time"
)

// BootMargin is what TimeoutFor adds to a test binary's own timeout: the
// guest's boot and shutdown under TCG.
const BootMargin = 3 * time.Minute

// TimeoutFor is the limit for running args in a guest when it is a test
// binary run by `go test -exec`: its -test.timeout (which go test always
// passes, 10m unless told otherwise) plus BootMargin, so that the test's
// own timeout fires first and reports which test hung. ok is false when
// args carry no positive -test.timeout.
func TimeoutFor(args []string) (d time.Duration, ok bool) {
	for i, a := range args {
		v, found := strings.CutPrefix(a, "-test.timeout=")
		if !found {
			if a != "-test.timeout" || i+1 >= len(args) {
				continue
			}
			v = args[i+1]
		}
		t, err := time.ParseDuration(v)
		if err != nil || t <= 0 {
			return 0, false
		}
		return t + BootMargin, true
	}
	return 0, false
}

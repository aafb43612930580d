//go:build linux

package bench

import (
	"errors"
)

// ErrExists is returned when the output file exists and resuming was not
// asked for: measured results are never overwritten.
var ErrExists = errors.New("the results file exists")

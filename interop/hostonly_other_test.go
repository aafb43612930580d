//go:build !linux

package interop

import "testing"

func hostOnly(*testing.T) {}

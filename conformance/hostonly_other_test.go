//go:build !linux

package conformance

import "testing"

func hostOnly(*testing.T) {}

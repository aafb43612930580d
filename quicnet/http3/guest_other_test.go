//go:build !linux

package http3_test

import "testing"

// hostOnly: off Linux there is no guest.
func hostOnly(testing.TB, string) {}

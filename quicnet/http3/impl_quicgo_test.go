//go:build !kquic || !linux

package http3_test

import "testing"

// requireImpl skips nothing: quic-go runs everywhere.
func requireImpl(testing.TB) {}

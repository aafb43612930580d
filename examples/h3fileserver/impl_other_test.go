//go:build !linux

package main

import "testing"

// requireImpl: off Linux quicnet runs on quic-go, which runs everywhere.
func requireImpl(testing.TB) {}

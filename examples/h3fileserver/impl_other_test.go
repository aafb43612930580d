//go:build !kquic || !linux

package main

import "testing"

func requireImpl(testing.TB) {}

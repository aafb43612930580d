//go:build !linux

package fuzz

import "testing"

func hostOnly(*testing.T) {}

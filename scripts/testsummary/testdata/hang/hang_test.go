// Package hang has a test that passes, one that fails and one that never
// returns: testsummary's test runs it under a short -timeout.
package hang

import "testing"

func TestPasses(t *testing.T) {}

func TestFails(t *testing.T) { t.Error("fails as it should") }

func TestHangs(t *testing.T) { select {} }

//go:build linux

package testenv

import (
	"strings"
	"sync"
	"testing"

	"kquic.dev/kmod/knownbugs"
)

// ModuleEnv names the variable that points the tests at a built quic.ko.
const ModuleEnv = knownbugs.ModuleEnv

var (
	buildIDOnce sync.Once
	buildIDs    []string
)

// ModuleBuilds identifies the QUIC module the tests run against, in every
// way it can (knownbugs.Builds of $KQUIC_MODULE): the loaded module's GNU
// build ID, the lxin/quic commit of the git checkout quic.ko lies in, and
// its code hash (or SHA-256). Empty where no module is known.
func ModuleBuilds() []string {
	buildIDOnce.Do(func() { buildIDs = knownbugs.Builds("") })
	return buildIDs
}

// ModuleBuild is ModuleBuilds joined for messages.
func ModuleBuild() string { return strings.Join(ModuleBuilds(), ", ") }

// moduleBuilds names the module file (knownbugs.FileBuilds).
func moduleBuilds(mod string) []string { return knownbugs.FileBuilds(mod) }

// KnownModuleBug is a bug of the QUIC module that a test reproduces, and
// the module builds it was seen on (the list is kmod/knownbugs').
type KnownModuleBug = knownbugs.Bug

// ModuleBug reports the outcome of a test that reproduces bug: where the bug
// showed (reproduced) on a build known to have it, the test is an expected
// failure (skipped with the evidence, so it stays visible); on any other
// build it fails, since a build not known to have the bug has it. Where it
// did not show on a build known to have it, a deterministic reproduction
// fails ("no longer shows": the list is wrong or the test is), and a flaky
// one passes with a note; elsewhere the test passes, noting that the bug is
// gone from this build.
func ModuleBug(t testing.TB, bug KnownModuleBug, reproduced bool, evidence string) {
	t.Helper()
	build := ModuleBuild()
	known := false
	for _, b := range bug.SeenOn {
		for _, id := range ModuleBuilds() {
			known = known || b == id
		}
	}
	switch {
	case reproduced && known:
		t.Skipf("%s (expected failure on module build %s): %s: %s", KnownBugMarker, build, bug.What, evidence)
	case reproduced:
		t.Fatalf("module bug on build %q, which is not known to have it (seen on %v): %s: %s; if this build has it, add the build to the bug's SeenOn", build, bug.SeenOn, bug.What, evidence)
	case known && !bug.Flaky:
		t.Errorf("module build %s is listed as having this bug, but it no longer shows: %s (remove the build from SeenOn, or fix the reproducer)", build, bug.What)
	case known:
		t.Logf("module bug did not show this time on build %s, which has it (timing-dependent): %s", build, bug.What)
	default:
		t.Logf("module bug not present on build %s (it was on %v): %s", build, bug.SeenOn, bug.What)
	}
}

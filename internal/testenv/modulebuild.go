//go:build linux

package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kquic.dev/kmod"
)

// ModuleEnv names the variable that points the tests at a built quic.ko.
const ModuleEnv = "KQUIC_MODULE"

var (
	buildIDOnce sync.Once
	buildIDs    []string
)

// ModuleBuilds identifies the QUIC module the tests run against, in every
// way it can: the loaded module's GNU build ID ("build-id:…", exact for one
// binary, but it changes with the folder the module was built in, since the
// linker hashes the debug information too); the lxin/quic commit of the
// source tree $KQUIC_MODULE lies in ("lxin/quic@03a9c7cdb2d5", "+dirty"
// when the tree has changes; the same for every build of that source), where
// it lies in a git checkout; and the code of the $KQUIC_MODULE file
// ("code:…", kmod.CodeHash: its loaded sections and their relocations, the
// same for every build of one source against one kernel with one compiler,
// in whatever folder, exported tree or checkout), or the file's SHA-256
// ("sha256:…") where it cannot be read as ELF. Empty where no module is
// known.
func ModuleBuilds() []string {
	buildIDOnce.Do(func() {
		if m, err := kmod.Loaded("quic"); err == nil && m.BuildID != "" {
			buildIDs = append(buildIDs, "build-id:"+m.BuildID)
		}
		buildIDs = append(buildIDs, moduleBuilds(os.Getenv(ModuleEnv))...)
	})
	return buildIDs
}

// ModuleBuild is ModuleBuilds joined for messages.
func ModuleBuild() string { return strings.Join(ModuleBuilds(), ", ") }

// moduleBuilds names the module file: the lxin/quic commit of the git tree
// it lies in, if any, and its code hash (or, where it is not ELF, its
// SHA-256).
func moduleBuilds(mod string) []string {
	if mod == "" {
		return nil
	}
	if real, err := filepath.EvalSymlinks(mod); err == nil {
		mod = real
	}
	var ids []string
	if id := sourceCommit(mod); id != "" {
		ids = append(ids, id)
	}
	if code, err := kmod.ModuleCodeHash(mod); err == nil {
		return append(ids, "code:"+code)
	}
	f, err := os.Open(mod)
	if err != nil {
		return ids
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ids
	}
	return append(ids, "sha256:"+hex.EncodeToString(h.Sum(nil))[:16])
}

// sourceCommit is the commit of the git checkout the module file lies in
// ("lxin/quic@…", "+dirty" with changes), or "" outside one.
func sourceCommit(mod string) string {
	dir, _ := filepath.Abs(filepath.Dir(mod))
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			out, err := exec.Command("git", "-C", d, "rev-parse", "HEAD").Output()
			if err != nil || len(strings.TrimSpace(string(out))) < 12 {
				return ""
			}
			id := "lxin/quic@" + strings.TrimSpace(string(out))[:12]
			if st, err := exec.Command("git", "-C", d, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
				id += "+dirty"
			}
			return id
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// KnownModuleBug is a bug of the QUIC module that a test reproduces, and
// the module builds it was seen on.
type KnownModuleBug struct {
	// What the bug is, for the report.
	What string
	// SeenOn lists the builds that have it, each in one of the forms
	// ModuleBuilds gives.
	SeenOn []string
	// Flaky says the reproduction depends on timing: a run on a build
	// that has the bug may not show it.
	Flaky bool
}

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
		t.Skipf("KNOWN MODULE BUG (expected failure on module build %s): %s: %s", build, bug.What, evidence)
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

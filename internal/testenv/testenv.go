//go:build linux

// Package testenv lets tests that need a kernel feature run for real where the
// feature is present and skip, saying why, where it is absent, unless the run
// requires it: features listed in $KQUIC_REQUIRE (comma-separated names of
// kmod.Feature, as `make test` sets them for the guest) fail the test instead,
// so a guest run can never pass by skipping.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kquic.dev/kmod"
	"kquic.dev/kmod/debkernel"
	"kquic.dev/kmod/vm"
)

// RequireEnv names the variable listing the features a run must have.
const RequireEnv = "KQUIC_REQUIRE"

// Required reports whether the run demands the named feature.
func Required(name string) bool {
	for _, f := range strings.Split(os.Getenv(RequireEnv), ",") {
		if strings.TrimSpace(f) == name {
			return true
		}
	}
	return false
}

// skipOrFail skips, or fails when the feature is required.
func skipOrFail(t testing.TB, name, format string, args ...any) {
	t.Helper()
	if Required(name) {
		t.Fatalf("required by $"+RequireEnv+" but absent: "+format, args...)
	}
	t.Skipf(format, args...)
}

// Require runs the test only where every feature is present.
func Require(t testing.TB, features ...kmod.Feature) {
	t.Helper()
	for _, f := range features {
		if err := kmod.Probe(f); err != nil {
			skipOrFail(t, string(f), "needs %s: %v", f, err)
		}
		if f == kmod.FeatureQUIC {
			t.Log(QUICMarker)
		}
	}
}

// Root runs the test only as root (network namespaces and module loading
// need it).
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "root", "needs root")
	}
}

// HostOnly skips the test inside a guest started by the harness, for tests
// that need what only the host has (its network, qemu).
func HostOnly(t testing.TB, why string) {
	t.Helper()
	if vm.InGuest() {
		t.Skip("runs on the host only: " + why)
	}
}

// VM returns a harness configuration for tests that boot a guest: the kernel
// from $KQUIC_KERNEL/$KQUIC_MODULES or the cached Debian kernel, and kqbench
// kqbench as init. It skips (or fails, when "vm" is required) where no guest
// can be booted, and inside a guest (no VM inside the VM).
func VM(t testing.TB) vm.Config {
	t.Helper()
	canBoot(t)
	cfg := vm.Config{Kernel: os.Getenv("KQUIC_KERNEL"), Modules: os.Getenv("KQUIC_MODULES")}
	if cfg.Kernel == "" {
		k, err := debkernel.Cached(debkernel.Options{})
		if err != nil {
			skipOrFail(t, "vm", "no guest kernel in the cache %s: run `make kernel` (or `kqbench kernel fetch`), or point $%s at the cache that has it, or $KQUIC_KERNEL/$KQUIC_MODULES at a kernel: %v", debkernel.DefaultCacheDir(), debkernel.CacheEnv, err)
		}
		cfg.Kernel, cfg.Modules = k.Image, k.Modules
	}
	cfg.Init = Kqbench(t)
	return cfg
}

// canBoot skips a test that boots a guest where none can be booted.
func canBoot(t testing.TB) {
	t.Helper()
	if vm.InGuest() {
		t.Skip("already inside a guest: the harness tests run on the host")
	}
	if err := kmod.Probe(kmod.FeatureQemu); err != nil {
		skipOrFail(t, "vm", "needs qemu: %v", err)
	}
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildOut  []byte
)

// Kqbench returns a kqbench binary: $KQVM_INIT_BINARY when set (make
// test sets it to bin/kqbench), else one built once per test process.
func Kqbench(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(vm.InitBinaryEnv); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kqbench-test-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "kqbench")
		cmd := exec.Command(goTool(), "build", "-o", buildPath, "kquic.dev/cmd/kqbench")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build kqbench: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}

// ToolsFeature is the name in $KQUIC_REQUIRE that makes a missing program of
// [Tool] fail the test instead of skipping it (make test requires it, and
// installs the programs first with scripts/deps).
const ToolsFeature = "tools"

// Tool returns the path of a program a test checks against (tshark, openssl,
// iperf3, cpio), skipping the test where it is not installed unless the run
// requires "tools".
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(t, ToolsFeature, "%s is not installed (apt-get install --no-install-recommends %s, or scripts/deps test)", name, pkg)
	}
	return p
}

// GoBuild builds package pkg (an import path) with the build tags into a
// directory of the test's and returns the binary, for a test that runs a
// build of the project other than its own (the kernel QUIC build of an
// example, in a guest).
func GoBuild(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command(goTool(), append(args, pkg)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s %s: %v\n%s", strings.Join(args, " "), pkg, err, b)
	}
	return out
}

// GoTest builds the test binary of package pkg (an import path) into a
// directory of the test's and returns it, for a test that runs another
// package's tests in a guest.
func GoTest(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg)+".test")
	cmd := exec.Command(goTool(), "test", "-c", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c %s: %v\n%s", pkg, err, b)
	}
	return out
}

// The variables naming a KCOV guest kernel, its module tree and the quic.ko
// built for it with KCOV instrumentation (scripts/kcov-kernel env prints
// them).
const (
	KCOVKernelEnv  = "KQUIC_KCOV_KERNEL"
	KCOVModulesEnv = "KQUIC_KCOV_MODULES"
	KCOVModuleEnv  = "KQUIC_KCOV_MODULE"
)

// KCOVFeature is the name in $KQUIC_REQUIRE that makes a missing KCOV
// kernel fail the test instead of skipping it.
const KCOVFeature = "kcov"

// KCOVVM returns a harness configuration that boots the KCOV kernel
// $KQUIC_KCOV_KERNEL with its module tree $KQUIC_KCOV_MODULES and loads
// $KQUIC_KCOV_MODULE (quic.ko built for it), with that module file. It
// skips, saying how to build them, where they are not given.
func KCOVVM(t testing.TB) (vm.Config, string) {
	t.Helper()
	canBoot(t)
	k, m, ko := os.Getenv(KCOVKernelEnv), os.Getenv(KCOVModulesEnv), os.Getenv(KCOVModuleEnv)
	if k == "" || m == "" || ko == "" {
		skipOrFail(t, KCOVFeature, "needs a KCOV kernel: build it with scripts/kcov-kernel all (as root, about an hour on 2 cores) and set the variables `scripts/kcov-kernel env` prints ($%s, $%s, $%s)", KCOVKernelEnv, KCOVModulesEnv, KCOVModuleEnv)
	}
	for _, p := range []string{k, m, ko} {
		if _, err := os.Stat(p); err != nil {
			skipOrFail(t, KCOVFeature, "the KCOV kernel's files: %v", err)
		}
	}
	return vm.Config{Kernel: k, Modules: m, ModuleFiles: []string{ko}, Init: Kqbench(t)}, ko
}

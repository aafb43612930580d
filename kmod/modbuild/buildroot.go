//go:build linux

package modbuild

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kquic.dev/kmod/debkernel"
)

// Root is a build root for one Debian kernel: a minimal Debian system of the
// kernel's release made with debootstrap, with make and the kernel's
// linux-headers package, which brings the compiler Debian built the kernel
// with.
type Root struct {
	// Dir is the root file system.
	Dir string `json:"dir"`
	// Release is the kernel release its headers are for ("7.3.4+deb13-amd64").
	Release string `json:"release"`
	// Suite is the suite of the headers, Base the release's main suite.
	Suite string `json:"suite"`
	Base  string `json:"base"`
	// Packages are the versions of the packages a build depends on
	// ("linux-headers-... 7.3.4-1~bpo13+1", "gcc-14 14.2.0-19", "make ...").
	Packages []string `json:"packages"`
	// Created is when it was made.
	Created time.Time `json:"created"`
	// Recipe is rootRecipe when it was made: a root made by another recipe
	// is made again.
	Recipe int `json:"recipe"`
}

// rootRecipe counts the changes to how a build root is made.
const rootRecipe = 2

// rootEnv is the environment of every command run in a build root.
var rootEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive"}

// baseSuite is the main suite of a suite: "trixie" of "trixie-backports".
func baseSuite(suite string) string {
	base, _, _ := strings.Cut(suite, "-")
	return base
}

// lock takes an exclusive lock on path (created if missing) until the
// returned function is called.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// ensureRoot returns the build root of kernel release, making it first
// (minutes: a debootstrap and the headers' packages, about 510 MB) unless it
// is in the cache.
func ensureRoot(ctx context.Context, ko debkernel.Options, release string, log io.Writer) (*Root, error) {
	dir := filepath.Join(ko.CacheDir, "buildroot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	unlock, err := lock(filepath.Join(dir, release+".lock"))
	if err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	defer unlock()
	final := filepath.Join(dir, release)
	if r, err := readRoot(final); err == nil {
		return r, nil
	}
	for _, tool := range []struct{ bin, pkg string }{{"debootstrap", "debootstrap"}, {"chroot", "coreutils"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			return nil, fmt.Errorf("make the build root for %s: %s not found: install it (apt-get install %s)", release, tool.bin, tool.pkg)
		}
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("make the build root for %s: debootstrap and chroot need root", release)
	}
	if _, err := os.Stat(ko.Keyring); err != nil {
		return nil, fmt.Errorf("make the build root for %s: keyring %s missing: install debian-archive-keyring", release, ko.Keyring)
	}
	os.RemoveAll(final)
	tmp, err := os.MkdirTemp(dir, ".new-"+release+"-")
	if err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	defer os.RemoveAll(tmp)
	logPath := filepath.Join(dir, release+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	defer lf.Close()
	base := baseSuite(ko.Suite)
	headers := "linux-headers-" + release
	r := &Root{Release: release, Suite: ko.Suite, Base: base}
	fmt.Fprintf(log, "making the build root for %s in %s: debootstrap %s, then make and %s from %s (minutes, once; log in %s)\n", release, final, base, headers, ko.Suite, logPath)
	steps := []struct {
		what string
		args []string
		pre  func() error
	}{
		{what: "debootstrap " + base, args: []string{"debootstrap", "--variant=minbase", "--keyring=" + ko.Keyring, "--components=main", base, tmp, ko.Mirror}},
		{what: "apt-get update", args: []string{"chroot", tmp, "apt-get", "update", "-q"}, pre: func() error {
			src := fmt.Sprintf("deb %s %s main\n", ko.Mirror, base)
			if ko.Suite != base {
				src += fmt.Sprintf("deb %s %s main\n", ko.Mirror, ko.Suite)
			}
			return os.WriteFile(filepath.Join(tmp, "etc/apt/sources.list"), []byte(src), 0o644)
		}},
		{what: "apt-get install " + headers, args: []string{"chroot", tmp, "apt-get", "install", "-q", "-y", "--no-install-recommends", "make", headers}},
		// The headers depend on the compiler's "-for-host" package only;
		// its full package brings the assembler and linker (binutils).
		{what: "apt-get install the kernel's compiler", args: []string{"chroot", tmp, "sh", "-c", `cc=$(dpkg-query -W -f '${Package}\n' 'gcc-[0-9]*-for-host' | sed -n 's/-for-host$//p' | head -1); echo "compiler package: ${cc:?none of the headers' dependencies is a gcc-N-for-host}"; apt-get install -q -y --no-install-recommends "$cc"`}},
		{what: "apt-get clean", args: []string{"chroot", tmp, "apt-get", "clean"}},
	}
	for _, s := range steps {
		if s.pre != nil {
			if err := s.pre(); err != nil {
				return nil, fmt.Errorf("make the build root for %s: %s: %w", release, s.what, err)
			}
		}
		fmt.Fprintf(lf, "\n$ %s\n", strings.Join(s.args, " "))
		cmd := exec.CommandContext(ctx, s.args[0], s.args[1:]...)
		cmd.Env = rootEnv
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Run(); err != nil {
			lf.Sync()
			return nil, fmt.Errorf("make the build root for %s: %s failed: %w (is %s reachable? log %s): %s", release, s.what, err, ko.Mirror, logPath, tail(logPath, 8))
		}
	}
	if err := hasBuildTree(tmp, release); err != nil {
		return nil, fmt.Errorf("make the build root for %s: %s installed no kernel build tree: %w (log %s)", release, headers, err, logPath)
	}
	out, err := exec.CommandContext(ctx, "chroot", tmp, "sh", "-c", `dpkg-query -W -f '${Package} ${Version}\n' make pahole `+headers+` | sort; dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'gcc-[0-9]*' | grep ' installed$' | cut -d' ' -f1,2`).Output()
	if err != nil {
		return nil, fmt.Errorf("make the build root for %s: list its packages: %w", release, err)
	}
	r.Packages = strings.Split(strings.TrimSpace(string(out)), "\n")
	r.Created, r.Recipe = time.Now().UTC(), rootRecipe
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	r.Dir = final
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, release+".json"), b, 0o644); err != nil {
		return nil, fmt.Errorf("build root: %w", err)
	}
	fmt.Fprintf(log, "build root ready: %s (%s)\n", final, strings.Join(r.Packages, ", "))
	return r, nil
}

// readRoot returns the build root made in dir, if it is complete.
func readRoot(dir string) (*Root, error) {
	b, err := os.ReadFile(dir + ".json")
	if err != nil {
		return nil, err
	}
	r := &Root{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, err
	}
	if r.Recipe != rootRecipe {
		return nil, fmt.Errorf("build root %s was made by recipe %d, not %d", dir, r.Recipe, rootRecipe)
	}
	if err := hasBuildTree(dir, r.Release); err != nil {
		return nil, err
	}
	r.Dir = dir
	return r, nil
}

// hasBuildTree checks that root has the kernel build tree of release, at
// /lib/modules/<release>/build (an absolute link into /usr/src, so looked
// at from inside the root).
func hasBuildTree(root, release string) error {
	if out, err := exec.Command("chroot", root, "test", "-f", "/lib/modules/"+release+"/build/Makefile").CombinedOutput(); err != nil {
		return fmt.Errorf("no /lib/modules/%s/build/Makefile in %s: %v %s", release, root, err, out)
	}
	return nil
}

// CachedRoot returns the build root for the Debian kernel o.Kernel selects,
// if both the kernel and the root are in the cache; it downloads nothing.
func CachedRoot(o Options) (*Root, error) {
	o.defaults()
	k, err := debkernel.Cached(o.Kernel)
	if err != nil {
		return nil, err
	}
	return readRoot(filepath.Join(o.Kernel.CacheDir, "buildroot", k.Release))
}

// MirrorRelease is the address of the Release file of the suite a build
// root is made from, to check that the mirror answers.
func MirrorRelease(o Options) string {
	o.defaults()
	return strings.TrimSuffix(o.Kernel.Mirror, "/") + "/dists/" + baseSuite(o.Kernel.Suite) + "/Release"
}

// Package debkernel fetches a Debian kernel (image and module tree) for the VM
// harness, pinned by version, through a private apt configuration that leaves
// the system's sources alone, and keeps it in a cache directory.
//
// Debian's mirrors drop superseded kernels (backports keep only the newest).
// When the pinned release is gone, [Ensure] resolves the current one through
// the suite's linux-image-<flavour> metapackage and says so in
// [Kernel.Note]; modules built out of tree must then be rebuilt for it.
package debkernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The kernel the project tests against by default.
const (
	DefaultRelease = "7.3.4+deb13"
	DefaultSuite   = "trixie-backports"
	DefaultFlavour = "amd64"
	DefaultMirror  = "http://deb.debian.org/debian"
	// DefaultKeyring verifies the suite's Release file.
	DefaultKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
)

// CacheEnv names the environment variable that overrides the cache directory.
const CacheEnv = "KQUIC_CACHE"

// Options says which kernel to fetch and where to keep it.
type Options struct {
	// CacheDir holds downloads and unpacked kernels (default: DefaultCacheDir).
	CacheDir string
	// Release is the Debian kernel ABI name without flavour ("7.3.4+deb13").
	Release string
	// Suite, Flavour, Mirror and Keyring select the archive.
	Suite, Flavour, Mirror, Keyring string
	// Exact refuses to fall back to the suite's current kernel when Release
	// is no longer in the archive.
	Exact bool
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// Kernel is an unpacked Debian kernel.
type Kernel struct {
	// Release is the kernel release, as uname -r shows it ("7.3.4+deb13-amd64").
	Release string `json:"release"`
	// Package is the Debian package version ("7.3.4-1~bpo13+1").
	Package string `json:"package"`
	// Suite is where it came from.
	Suite string `json:"suite"`
	// Image is the kernel image (vmlinuz) and Modules its module tree.
	Image   string `json:"image"`
	Modules string `json:"modules"`
	// Note says when the pinned release was gone and another was used.
	Note string `json:"note,omitempty"`
}

// DefaultCacheDir is where kernels are kept unless told otherwise: $KQUIC_CACHE;
// else, when the working directory is inside a checkout of this project (a
// go.mod declaring module kquic.dev, looked for upwards), that checkout's
// git-ignored .cache, so `make`, `go test ./...` and `kqbench` run by hand
// in the checkout share one cache; else $XDG_CACHE_HOME/kquic or
// ~/.cache/kquic.
func DefaultCacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		if root := ProjectRoot(wd); root != "" {
			return filepath.Join(root, ".cache")
		}
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "kquic")
	}
	return filepath.Join(os.TempDir(), "kquic-cache")
}

// modulePath is the Go module path that marks a checkout of this project.
const modulePath = "kquic.dev"

// ProjectRoot returns the checkout of this project that dir is in (the
// directory of a go.mod declaring module kquic.dev), or "" when it is in
// none.
func ProjectRoot(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
					if strings.Trim(f[1], `"`) == modulePath {
						return d
					}
					break
				}
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func (o *Options) defaults() {
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Release == "" {
		o.Release = DefaultRelease
	}
	if o.Suite == "" {
		o.Suite = DefaultSuite
	}
	if o.Flavour == "" {
		o.Flavour = DefaultFlavour
	}
	if o.Mirror == "" {
		o.Mirror = DefaultMirror
	}
	if o.Keyring == "" {
		o.Keyring = DefaultKeyring
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Cached returns the kernel if it is already unpacked in the cache.
func Cached(o Options) (*Kernel, error) {
	o.defaults()
	return readMeta(filepath.Join(o.CacheDir, "kernels", o.Release+"-"+o.Flavour))
}

func readMeta(dir string) (*Kernel, error) {
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	k := &Kernel{}
	if err := json.Unmarshal(b, k); err != nil {
		return nil, fmt.Errorf("cached kernel %s: %w (delete the directory to fetch it again)", dir, err)
	}
	for _, p := range []string{k.Image, filepath.Join(k.Modules, "modules.dep")} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("cached kernel %s is incomplete: %w (delete the directory to fetch it again)", dir, err)
		}
	}
	return k, nil
}

// Ensure returns the kernel, downloading and unpacking it first unless it is
// cached. It needs apt-get, dpkg-deb and depmod (package kmod).
func Ensure(ctx context.Context, o Options) (*Kernel, error) {
	o.defaults()
	if k, err := Cached(o); err == nil {
		return k, nil
	}
	for _, tool := range []struct{ bin, pkg string }{{"apt-get", "apt"}, {"dpkg-deb", "dpkg"}, {"depmod", "kmod"}} {
		if _, err := exec.LookPath(tool.bin); err != nil {
			return nil, fmt.Errorf("fetch Debian kernel: %s not found: install it (apt-get install %s)", tool.bin, tool.pkg)
		}
	}
	a, err := newApt(o)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "fetching Debian kernel %s-%s from %s (%s)\n", o.Release, o.Flavour, o.Suite, o.Mirror)
	if _, err := a.run(ctx, "", "apt-get", "update", "-q"); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: apt-get update for %s failed: %w (is %s reachable?)", o.Suite, err, o.Mirror)
	}
	// apt-get update only warns when a source fails: check that a package
	// list of the suite arrived.
	if lists, _ := filepath.Glob(filepath.Join(a.dir, "state/lists", "*_dists_"+o.Suite+"_main_binary-amd64_Packages*")); len(lists) == 0 {
		return nil, fmt.Errorf("fetch Debian kernel: no package list of suite %q came from %s: is the mirror reachable and the suite name right?", o.Suite, o.Mirror)
	}
	release, note := o.Release, ""
	version, err := a.version(ctx, binaryPkg(release, o.Flavour))
	if err != nil {
		if o.Exact {
			return nil, fmt.Errorf("fetch Debian kernel: %s is not in %s: %w (it may have been superseded; drop --exact to use the current one)", binaryPkg(release, o.Flavour), o.Suite, err)
		}
		cur, cerr := a.current(ctx, o.Flavour)
		if cerr != nil {
			return nil, fmt.Errorf("fetch Debian kernel: %s is not in %s (%v), and the suite's current kernel could not be resolved either: %w", binaryPkg(release, o.Flavour), o.Suite, err, cerr)
		}
		note = fmt.Sprintf("kernel %s is no longer in %s; using %s, the current one (from linux-image-%s)", release, o.Suite, cur, o.Flavour)
		fmt.Fprintln(o.Log, note)
		release = cur
		if k, err := readMeta(filepath.Join(o.CacheDir, "kernels", release+"-"+o.Flavour)); err == nil {
			k.Note = note
			return k, nil
		}
		if version, err = a.version(ctx, binaryPkg(release, o.Flavour)); err != nil {
			return nil, fmt.Errorf("fetch Debian kernel: %w", err)
		}
	}
	return a.unpack(ctx, release, version, note)
}

func binaryPkg(release, flavour string) string { return "linux-binary-" + release + "-" + flavour }

type apt struct {
	o    Options
	dir  string
	conf string
}

func newApt(o Options) (*apt, error) {
	dir := filepath.Join(o.CacheDir, "apt", o.Suite)
	for _, d := range []string{"etc/sources.list.d", "etc/preferences.d", "etc/apt.conf.d", "state/lists/partial", "archives/partial", "cache"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("fetch Debian kernel: cache directory: %w", err)
		}
	}
	if _, err := os.Stat(o.Keyring); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: keyring %s missing: install debian-archive-keyring", o.Keyring)
	}
	src := fmt.Sprintf("deb [signed-by=%s] %s %s main\n", o.Keyring, o.Mirror, o.Suite)
	if err := os.WriteFile(filepath.Join(dir, "etc/sources.list"), []byte(src), 0o644); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`Dir::Etc "%[1]s/etc";
Dir::Etc::SourceList "%[1]s/etc/sources.list";
Dir::Etc::SourceParts "%[1]s/etc/sources.list.d";
Dir::Etc::Parts "%[1]s/etc/apt.conf.d";
Dir::Etc::PreferencesParts "%[1]s/etc/preferences.d";
Dir::State "%[1]s/state";
Dir::State::status "/dev/null";
Dir::Cache "%[1]s/cache";
Dir::Cache::archives "%[1]s/archives";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
`, dir)
	p := filepath.Join(dir, "apt.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return &apt{o: o, dir: dir, conf: p}, nil
}

func (a *apt) run(ctx context.Context, wd, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "APT_CONFIG="+a.conf, "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(msg, 5))
	}
	return out.Bytes(), nil
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "; ")
}

// version returns the archive's version of a package.
func (a *apt) version(ctx context.Context, pkg string) (string, error) {
	out, err := a.run(ctx, "", "apt-cache", "show", "--no-all-versions", pkg)
	if err != nil {
		return "", fmt.Errorf("package %s not found", pkg)
	}
	if v := field(out, "Version"); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("package %s has no Version", pkg)
}

var imageDep = regexp.MustCompile(`linux-image-([0-9][^ ,]*)-([a-z0-9-]+?)(?:-unsigned)?\b`)

// current resolves the release the linux-image-<flavour> metapackage points at.
func (a *apt) current(ctx context.Context, flavour string) (string, error) {
	meta := "linux-image-" + flavour
	out, err := a.run(ctx, "", "apt-cache", "show", "--no-all-versions", meta)
	if err != nil {
		return "", fmt.Errorf("metapackage %s not found", meta)
	}
	deps := field(out, "Depends")
	for _, m := range imageDep.FindAllStringSubmatch(deps, -1) {
		if m[2] == flavour {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("metapackage %s depends on no linux-image-*-%s (Depends: %s)", meta, flavour, deps)
}

func field(control []byte, name string) string {
	for _, l := range strings.Split(string(control), "\n") {
		if v, ok := strings.CutPrefix(l, name+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (a *apt) unpack(ctx context.Context, release, version, note string) (*Kernel, error) {
	o := a.o
	full := release + "-" + o.Flavour
	pkgs := []string{"linux-binary-" + full, "linux-modules-" + full, "linux-base-" + full}
	dl := filepath.Join(a.dir, "archives")
	var args []string
	for _, p := range pkgs {
		args = append(args, p+"="+version)
	}
	fmt.Fprintf(o.Log, "downloading %s (%s)\n", strings.Join(pkgs, ", "), version)
	if _, err := a.run(ctx, dl, "apt-get", append([]string{"download", "-q"}, args...)...); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: download failed: %w", err)
	}
	kernels := filepath.Join(o.CacheDir, "kernels")
	if err := os.MkdirAll(kernels, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(kernels, ".unpack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	for _, p := range pkgs {
		debs, _ := filepath.Glob(filepath.Join(dl, p+"_*.deb"))
		deb := ""
		for _, d := range debs {
			if strings.Contains(filepath.Base(d), "_"+strings.ReplaceAll(version, ":", "%3a")+"_") {
				deb = d
			}
		}
		if deb == "" {
			return nil, fmt.Errorf("fetch Debian kernel: %s %s was not downloaded", p, version)
		}
		if _, err := a.run(ctx, "", "dpkg-deb", "-x", deb, root); err != nil {
			return nil, fmt.Errorf("fetch Debian kernel: unpack %s: %w", filepath.Base(deb), err)
		}
	}
	modRel := filepath.Join("usr/lib/modules", full)
	// depmod looks in <base>/lib/modules; Debian ships /usr/lib/modules.
	if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: %w", err)
	}
	if _, err := a.run(ctx, "", "depmod", "-b", root, full); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: depmod: %w", err)
	}
	final := filepath.Join(kernels, full)
	if err := os.RemoveAll(final); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	k := &Kernel{
		Release: full, Package: version, Suite: o.Suite, Note: note,
		Image:   filepath.Join(final, "root", modRel, "vmlinuz"),
		Modules: filepath.Join(final, "root", modRel),
	}
	if _, err := os.Stat(k.Image); err != nil {
		return nil, fmt.Errorf("fetch Debian kernel: %s has no vmlinuz: %w", pkgs[0], err)
	}
	b, _ := json.MarshalIndent(k, "", "  ")
	if err := writeFileAtomic(filepath.Join(final, "kernel.json"), b); err != nil {
		return nil, err
	}
	// Downloaded packages are unpacked now: keep the cache small.
	for _, p := range pkgs {
		debs, _ := filepath.Glob(filepath.Join(dl, p+"_*.deb"))
		for _, d := range debs {
			os.Remove(d)
		}
	}
	fmt.Fprintf(o.Log, "kernel %s (%s) ready in %s\n", full, version, final)
	return k, nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ErrNotCached is returned by helpers that will not download.
var ErrNotCached = errors.New("kernel not in the cache")

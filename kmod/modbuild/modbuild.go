//go:build linux

package modbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"kquic.dev/kmod"
	"kquic.dev/kmod/debkernel"
)

// Options says what to build and for which kernel.
type Options struct {
	// Src is the module's directory: the one whose Kbuild (or Makefile)
	// declares obj-m.
	Src string
	// Ref, if set, builds that commit of the git tree Src lies in instead of
	// the files in Src.
	Ref string
	// KernelBuild, if set, is a kernel build tree (with its .config and
	// Module.symvers) to build against with the host's compiler; else the
	// module is built for the Debian guest kernel that Kernel selects, in a
	// build root made once in the cache.
	KernelBuild string
	// MakeVars are extra variables for make ("NAME=value"). A value naming
	// a directory that contains Src (a tree's top, for its include
	// directory) is copied along with Src and points at the copy.
	MakeVars []string
	// Kernel selects the Debian kernel (release, suite, mirror) and the
	// cache directory.
	Kernel debkernel.Options
	// Jobs is make's -j (default: the number of CPUs).
	Jobs int
	// Rebuild builds even when the cache has a build of this source.
	Rebuild bool
	// Log receives progress lines (default: discarded).
	Log io.Writer
}

// Result is a finished (or cached) build.
type Result struct {
	// Modules are the built module files, in the order kbuild lists them.
	Modules []string `json:"modules"`
	// Dir holds them, named by Code; it also has build.log and build.json.
	Dir string `json:"dir"`
	// Code names the modules' code: kmod.CodeHash of the module when there
	// is one, else of their names and code hashes.
	Code string `json:"code"`
	// Codes is each module's code hash, by file name.
	Codes map[string]string `json:"codes"`
	// Key is the cache key: the source's hash, the kernel, the make
	// variables.
	Key string `json:"key"`
	// Source is the source tree's hash ("git-tree:…" for a ref, else
	// "content:…").
	Source string `json:"source"`
	// Src, Ref and MakeVars are as asked.
	Src      string   `json:"src"`
	Ref      string   `json:"ref,omitempty"`
	MakeVars []string `json:"make_vars,omitempty"`
	// Kernel is the kernel release built for; Toolchain says with what
	// (the build root's packages, or the host compiler and the build tree).
	Kernel    string   `json:"kernel"`
	Toolchain []string `json:"toolchain"`
	// Built is when it was built; Took how long the build (make) took.
	Built time.Time     `json:"built"`
	Took  time.Duration `json:"took"`
	// Cached says this call found the build in the cache.
	Cached bool `json:"-"`
}

// Log is the build's log.
func (r *Result) Log() string { return filepath.Join(r.Dir, "build.log") }

func (o *Options) defaults() {
	k := &o.Kernel
	if k.CacheDir == "" {
		k.CacheDir = debkernel.DefaultCacheDir()
	}
	if k.Release == "" {
		k.Release = debkernel.DefaultRelease
	}
	if k.Suite == "" {
		k.Suite = debkernel.DefaultSuite
	}
	if k.Flavour == "" {
		k.Flavour = debkernel.DefaultFlavour
	}
	if k.Mirror == "" {
		k.Mirror = debkernel.DefaultMirror
	}
	if k.Keyring == "" {
		k.Keyring = debkernel.DefaultKeyring
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if k.Log == nil {
		k.Log = o.Log
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
}

// builder runs make for one kernel: in a build root, or on the host.
type builder struct {
	release   string
	toolchain []string
	root      string // the build root, or "" on the host
	tree      string // the kernel build tree, as make sees it
	scratch   string // where sources are copied, on the host
}

// path is a host path as make sees it.
func (b *builder) path(p string) string {
	if b.root == "" {
		return p
	}
	rel, _ := filepath.Rel(b.root, p)
	return "/" + rel
}

func (b *builder) command(ctx context.Context, args []string) *exec.Cmd {
	if b.root == "" {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		return cmd
	}
	// In a mount namespace of its own with /proc mounted in the root
	// (objtool reads it), which goes away with the build.
	script := `mount -t proc proc "$0/proc" && exec chroot "$0" "$@"`
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, b.root}, args...)...)
	cmd.Env = rootEnv
	return cmd
}

func newBuilder(ctx context.Context, o *Options) (*builder, error) {
	if o.KernelBuild != "" {
		tree, err := filepath.Abs(o.KernelBuild)
		if err != nil {
			return nil, err
		}
		rel, err := os.ReadFile(filepath.Join(tree, "include/config/kernel.release"))
		if err != nil {
			return nil, fmt.Errorf("--kernel-build %s is not a prepared kernel build tree (no include/config/kernel.release: run make modules_prepare, or give the tree's build directory): %w", o.KernelBuild, err)
		}
		if _, err := exec.LookPath("make"); err != nil {
			return nil, fmt.Errorf("--kernel-build: make not found: install it (apt-get install make)")
		}
		b := &builder{release: strings.TrimSpace(string(rel)), tree: tree, scratch: filepath.Join(o.Kernel.CacheDir, "modules", "work")}
		b.toolchain = []string{"kernel-build " + tree}
		if st, err := os.Stat(filepath.Join(tree, "Module.symvers")); err == nil {
			b.toolchain = append(b.toolchain, "Module.symvers "+st.ModTime().UTC().Format(time.RFC3339Nano))
		}
		if out, err := exec.CommandContext(ctx, "sh", "-c", "${CC:-gcc} --version | head -1").Output(); err == nil {
			b.toolchain = append(b.toolchain, "host "+strings.TrimSpace(string(out)))
		}
		return b, nil
	}
	k, err := debkernel.Ensure(ctx, o.Kernel)
	if err != nil {
		return nil, err
	}
	if k.Note != "" {
		fmt.Fprintln(o.Log, k.Note)
	}
	r, err := ensureRoot(ctx, o.Kernel, k.Release, o.Log)
	if err != nil {
		return nil, err
	}
	return &builder{release: k.Release, toolchain: r.Packages, root: r.Dir, tree: "/lib/modules/" + k.Release + "/build", scratch: filepath.Join(r.Dir, "build")}, nil
}

// cacheKey names a build by everything that goes into it.
func cacheKey(s *source, b *builder) string {
	h := sha256.New()
	fmt.Fprintf(h, "source %s\nmodule %s\nkernel %s\n", s.hash, filepath.ToSlash(s.modRel), b.release)
	for _, t := range b.toolchain {
		fmt.Fprintf(h, "toolchain %s\n", t)
	}
	for _, v := range s.vars {
		if v.inTree {
			fmt.Fprintf(h, "var %s=$TREE/%s\n", v.name, filepath.ToSlash(v.rel))
		} else {
			fmt.Fprintf(h, "var %s=%s\n", v.name, v.value)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Build builds the module(s) of o.Src for the guest kernel (or
// o.KernelBuild), or finds the build in the cache.
func Build(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	if err := applyRecipe(ctx, &o); err != nil {
		return nil, err
	}
	s, err := resolveSource(ctx, &o)
	if err != nil {
		return nil, err
	}
	b, err := newBuilder(ctx, &o)
	if err != nil {
		return nil, err
	}
	key := cacheKey(s, b)
	cache := filepath.Join(o.Kernel.CacheDir, "modules")
	for _, d := range []string{filepath.Join(cache, "by-key"), filepath.Join(cache, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("module cache: %w", err)
		}
	}
	keyFile := filepath.Join(cache, "by-key", key)
	if !o.Rebuild {
		if r, err := cached(cache, keyFile); err == nil {
			r.Cached = true
			return r, nil
		}
	}
	if err := os.MkdirAll(b.scratch, 0o755); err != nil {
		return nil, fmt.Errorf("module build: %w", err)
	}
	work, err := os.MkdirTemp(b.scratch, "build-")
	if err != nil {
		return nil, fmt.Errorf("module build: %w", err)
	}
	defer os.RemoveAll(work)
	tree := filepath.Join(work, "src")
	what := s.src
	if o.Ref != "" {
		what = fmt.Sprintf("%s at %s", s.src, o.Ref)
	}
	fmt.Fprintf(o.Log, "building %s for %s\n", what, b.release)
	if err := s.export(ctx, o.Ref, tree); err != nil {
		return nil, fmt.Errorf("copy the source %s: %w", what, err)
	}
	modDir := filepath.Join(tree, s.modRel)
	if o.Ref != "" {
		if _, err := checkModuleDir(modDir, filepath.Join(s.gitTop, s.gitPath, s.modRel)+" at "+o.Ref); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(cache, "logs", key+".log")
	took, err := b.makeModules(ctx, s, &o, tree, logPath, what)
	if err != nil {
		return nil, err
	}
	kos, err := builtModules(modDir)
	if err != nil {
		return nil, fmt.Errorf("build of %s for %s: %w (log %s)", what, b.release, err, logPath)
	}
	r := &Result{Key: key, Source: s.hash, Src: s.src, Ref: o.Ref, MakeVars: o.MakeVars, Kernel: b.release,
		Toolchain: b.toolchain, Built: time.Now().UTC(), Took: took}
	names, err := r.hashModules(modDir, kos)
	if err != nil {
		return nil, err
	}
	if err := r.store(cache, modDir, names, logPath); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile+".tmp", []byte(r.Code+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.Rename(keyFile+".tmp", keyFile); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "built in %s: code %s\n", took.Round(time.Second), r.Code)
	return r, nil
}

// makeModules runs kbuild on the source exported to tree, writing its log
// to logPath, and says how long it took.
func (b *builder) makeModules(ctx context.Context, s *source, o *Options, tree, logPath, what string) (time.Duration, error) {
	modDir := filepath.Join(tree, s.modRel)
	args := []string{"make", "-C", b.tree, "M=" + b.path(modDir), fmt.Sprintf("-j%d", o.Jobs)}
	for _, v := range s.vars {
		val := v.value
		if v.inTree {
			val = b.path(filepath.Join(tree, v.rel))
		}
		args = append(args, v.name+"="+val)
	}
	args = append(args, "modules")
	lf, err := os.Create(logPath)
	if err != nil {
		return 0, fmt.Errorf("module build: %w", err)
	}
	fmt.Fprintf(lf, "# %s for %s\n", what, b.release)
	for _, t := range b.toolchain {
		fmt.Fprintf(lf, "# toolchain: %s\n", t)
	}
	if b.root != "" {
		fmt.Fprintf(lf, "# in the build root %s\n", b.root)
	}
	fmt.Fprintf(lf, "$ %s\n", strings.Join(args, " "))
	cmd := b.command(ctx, args)
	cmd.Stdout, cmd.Stderr = lf, lf
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	lf.Close()
	if err != nil {
		return took, fmt.Errorf("build of %s for %s failed: %w; log %s, its end:\n%s", what, b.release, err, logPath, tail(logPath, 20))
	}
	return took, nil
}

// hashModules sets the result's code hashes of the modules kbuild made
// (kos, in modDir): each one's, and of them all the first's, or a hash of
// every one's where there are several. It returns their names.
func (r *Result) hashModules(modDir string, kos []string) ([]string, error) {
	r.Codes = map[string]string{}
	var names []string
	for _, ko := range kos {
		c, err := kmod.ModuleCodeHash(ko)
		if err != nil {
			return nil, err
		}
		name, _ := filepath.Rel(modDir, ko)
		r.Codes[name] = c
		names = append(names, name)
	}
	r.Code = r.Codes[names[0]]
	if len(names) > 1 {
		h := sha256.New()
		for _, n := range names {
			fmt.Fprintf(h, "%s %s\n", n, r.Codes[n])
		}
		r.Code = hex.EncodeToString(h.Sum(nil))[:32]
	}
	return names, nil
}

// builtModules lists the .ko files kbuild made, in its modules.order.
func builtModules(modDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(modDir, "modules.order"))
	if err != nil {
		return nil, fmt.Errorf("make made no modules.order: %w", err)
	}
	var kos []string
	for _, l := range strings.Fields(string(b)) {
		ko := filepath.Join(modDir, strings.TrimSuffix(l, ".o")+".ko")
		if _, err := os.Stat(ko); err != nil {
			return nil, fmt.Errorf("modules.order lists %s, but there is no %s", l, ko)
		}
		kos = append(kos, ko)
	}
	if len(kos) == 0 {
		return nil, errors.New("make built no module (an empty modules.order: is obj-m set? some trees need a make variable, such as CONFIG_...=m)")
	}
	return kos, nil
}

// store moves the build's modules and log into the cache directory named by
// its code, replacing an earlier build of the same code.
func (r *Result) store(cache, modDir string, names []string, logPath string) error {
	final := filepath.Join(cache, r.Code)
	tmp, err := os.MkdirTemp(cache, ".store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		dst := filepath.Join(tmp, n)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := copyFile(filepath.Join(modDir, n), dst); err != nil {
			return err
		}
		r.Modules = append(r.Modules, filepath.Join(final, n))
	}
	if err := copyFile(logPath, filepath.Join(tmp, "build.log")); err != nil {
		return err
	}
	r.Dir = final
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, "build.json"), b, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	os.Remove(logPath)
	return nil
}

// cached returns the build a key file names, if its files are all there.
func cached(cache, keyFile string) (*Result, error) {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cache, strings.TrimSpace(string(b)))
	j, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return nil, err
	}
	r := &Result{}
	if err := json.Unmarshal(j, r); err != nil {
		return nil, err
	}
	if r.Dir != dir || len(r.Modules) == 0 {
		return nil, errors.New("cache entry moved")
	}
	for _, m := range r.Modules {
		if _, err := os.Stat(m); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

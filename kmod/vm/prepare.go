//go:build linux

package vm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"kquic.dev/internal/cpio"
	"kquic.dev/kmod"
)

// prepare checks a guest's configuration and makes its job: the modules,
// the shares and the initramfs.
func prepare(cfg *Config, args []string, nic *nicPlan) (*job, error) {
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	var initLibs []string
	var err error
	if cfg.Init, initLibs, err = initBinary(cfg.Init); err != nil {
		return nil, err
	}
	j := &job{cfg: *cfg, args: args, initLibs: initLibs, nic: nic}
	if nic != nil {
		j.name = nic.name
	}
	if j.tree, err = kmod.OpenTree(cfg.Modules); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if j.accel, err = pickAccel(cfg.Accel); err != nil {
		return nil, err
	}
	// The 9p stack and overlayfs that make the root come from the initramfs.
	if j.early, err = j.tree.Resolve("9p", "9pnet_virtio", "overlay"); err != nil {
		return nil, fmt.Errorf("vm: the guest needs 9p to share the host's files: %w", err)
	}
	mods, report, err := j.modules()
	if err != nil {
		return nil, err
	}
	j.spec = spec{
		Args:       args,
		Env:        cfg.Env,
		Dir:        cfg.Dir,
		Modules:    dedupe(mods),
		ModulesDir: abs(cfg.Modules),
		Release:    j.tree.Release(),
		Stdin:      cfg.Stdin != nil,
		Report:     report,
	}
	if len(cfg.Forwards) > 0 {
		j.spec.FwdNIC = forwardNIC()
		j.spec.Env = append(slices.Clip(j.spec.Env), forwardEnv())
	}
	if nic != nil {
		j.spec.Name = strings.ToLower(nic.name)
		j.spec.NIC = &nic.spec
		j.spec.WaitGo = true
	}
	j.ready = make(chan struct{})
	for _, m := range j.early {
		j.spec.EarlyModules = append(j.spec.EarlyModules, "/modules/"+filepath.Base(m))
	}
	if err := j.planShares(); err != nil {
		return nil, err
	}
	if j.work, err = os.MkdirTemp("", "kqvm-"); err != nil {
		return nil, fmt.Errorf("vm: work directory: %w", err)
	}
	if err := j.writeInitramfs(); err != nil {
		os.RemoveAll(j.work)
		return nil, err
	}
	return j, nil
}

// checkConfig fills in the defaults of cfg's fields left zero, finds qemu
// and checks the kernel, the forwards and that a module tree is given.
func checkConfig(cfg *Config) error {
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = DefaultCPUs
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleLimit == 0 {
		cfg.IdleLimit = DefaultIdleLimit
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("vm: working directory: %w", err)
		}
		cfg.Dir = wd
	}
	if cfg.Qemu == "" {
		cfg.Qemu = "qemu-system-x86_64"
	}
	qemu, err := exec.LookPath(cfg.Qemu)
	if err != nil {
		return fmt.Errorf("vm: %s not found: install it (apt-get install qemu-system-x86)", cfg.Qemu)
	}
	cfg.Qemu = qemu
	if cfg.Kernel == "" {
		return errors.New("vm: no kernel image given: pass --kernel (or run `kqbench kernel fetch` for Debian's)")
	}
	if st, err := os.Stat(cfg.Kernel); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("vm: kernel image %s: not a readable file", cfg.Kernel)
	}
	if err := checkForwards(cfg.Forwards); err != nil {
		return err
	}
	if cfg.Modules == "" {
		return errors.New("vm: no module tree given: pass --modules (the lib/modules/<release> directory of the kernel)")
	}
	return nil
}

// modules are the modules the guest loads, with their dependencies: those
// of cfg.Load (a name ending in "?" only where the tree has it), virtio_net
// for a link or forwards, and cfg.ModuleFiles, whose names report lists.
func (j *job) modules() (mods, report []string, err error) {
	var load []string
	for _, m := range j.cfg.Load {
		// "name?" loads the module only where the tree has it.
		if name, optional := strings.CutSuffix(m, "?"); optional {
			if j.tree.Has(name) {
				load = append(load, name)
			}
			continue
		}
		load = append(load, m)
	}
	if mods, err = j.tree.Resolve(load...); err != nil {
		return nil, nil, fmt.Errorf("vm: %w", err)
	}
	if j.nic != nil || len(j.cfg.Forwards) > 0 {
		// The link's driver, when the kernel has it as a module.
		more, err := j.tree.Resolve("virtio_net")
		if err != nil {
			return nil, nil, fmt.Errorf("vm: %s needs virtio_net for the link: %w", j.what(), err)
		}
		mods = append(mods, more...)
	}
	for _, f := range j.cfg.ModuleFiles {
		more, err := j.tree.ResolveFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("vm: %w", err)
		}
		mods = append(mods, more...)
		report = append(report, kmod.ModuleName(f))
	}
	return mods, report, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func pickAccel(a string) (string, error) {
	switch a {
	case "", "auto":
		if kmod.Probe(kmod.FeatureKVM) == nil {
			return "kvm", nil
		}
		return "tcg", nil
	case "kvm", "tcg", "tcg-multi":
		return a, nil
	}
	return "", fmt.Errorf("vm: accelerator %q: use kvm, tcg, tcg-multi or auto", a)
}

// initBinary finds the binary to serve as the guest's init: one that calls
// vm.GuestMain (kqbench), static or dynamically linked.
func initBinary(given string) (string, []string, error) {
	var candidates []string
	switch {
	case given != "":
		candidates = []string{given}
	case os.Getenv(InitBinaryEnv) != "":
		candidates = []string{os.Getenv(InitBinaryEnv)}
	default:
		if exe, err := os.Executable(); err == nil {
			candidates = append(candidates, exe)
		}
	}
	var why []string
	for _, c := range candidates {
		libs, err := initLibs(c)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		return abs(c), libs, nil
	}
	return "", nil, fmt.Errorf("vm: no usable init: it must be a binary that calls vm.GuestMain, such as kqbench (`make build`); set %s to it (%s)",
		InitBinaryEnv, strings.Join(why, "; "))
}

// shadowed are the guest directories that do not show the host's content.
// (The guest's /tmp shows the host's, read-only, under the overlay.)
var shadowed = []string{"/run"}

var forbidden = []string{"/dev", "/proc", "/sys"}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// planShares decides which host directories get their own 9p share: those the
// user wants writable, and those the command needs that the guest's own
// mounts (/tmp, /run) would hide.
func (j *job) planShares() error {
	var want []share
	for _, s := range j.cfg.Shares {
		p := abs(s)
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			return fmt.Errorf("vm: share %s: not a directory on the host (create it first)", s)
		}
		want = append(want, share{p, false})
	}
	hidden := func(p string) bool {
		for _, d := range shadowed {
			if under(p, d) {
				return true
			}
		}
		return false
	}
	// A command in a temporary directory is a build product (go test's
	// binaries): files written beside it (coverage profiles) come back.
	if a := j.args[0]; strings.Contains(a, "/") && (hidden(abs(a)) || under(abs(a), os.TempDir())) {
		want = append(want, share{filepath.Dir(abs(a)), false})
	}
	if hidden(j.cfg.Dir) {
		want = append(want, share{abs(j.cfg.Dir), false})
	}
	for _, m := range j.spec.Modules {
		if hidden(m) && !under(m, j.spec.ModulesDir) {
			want = append(want, share{filepath.Dir(m), true})
		}
	}
	if hidden(j.spec.ModulesDir) {
		// Shown at its own path; /lib/modules/<release> binds to it.
		want = append(want, share{j.spec.ModulesDir, true})
	}
	for _, s := range want {
		for _, d := range forbidden {
			if under(s.host, d) {
				return fmt.Errorf("vm: %s cannot be shared with the guest: the guest has its own %s", s.host, d)
			}
		}
	}
	// Outer directories first; a directory inside a share of the same or a
	// stronger mode needs no share of its own.
	sort.SliceStable(want, func(a, b int) bool { return len(want[a].host) < len(want[b].host) })
	for _, s := range want {
		covered := false
		for _, have := range j.fs {
			if under(s.host, have.host) && (!have.ro || s.ro) {
				covered = true
			}
		}
		if !covered {
			j.fs = append(j.fs, s)
		}
	}
	for i, s := range j.fs {
		j.spec.Shares = append(j.spec.Shares, mount{Tag: fmt.Sprintf("kqvm-%d", i), Path: s.host, ReadOnly: s.ro})
	}
	return nil
}

func (j *job) writeInitramfs() error {
	f, err := os.Create(filepath.Join(j.work, "initramfs.cpio"))
	if err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := cpio.NewWriter(bw)
	for _, d := range []string{"dev", "proc", "sys", "newroot", "modules"} {
		w.Dir(d, 0o755)
	}
	w.CharDev("dev/console", 0o600, 5, 1)
	w.CharDev("dev/null", 0o666, 1, 3)
	w.CopyFile("init", j.cfg.Init)
	// A dynamically linked init needs its loader and libraries before the
	// host's root is mounted.
	for _, l := range j.initLibs {
		w.CopyFile(strings.TrimPrefix(l, "/"), l)
	}
	for _, m := range j.early {
		w.CopyFile("modules/"+filepath.Base(m), m)
	}
	js, err := json.Marshal(j.spec)
	if err != nil {
		return fmt.Errorf("vm: encode job: %w", err)
	}
	w.File(strings.TrimPrefix(specPath, "/"), 0o644, js)
	// The writer's errors are sticky: Close reports the first one.
	if err := w.Close(); err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vm: initramfs: %w", err)
	}
	return nil
}

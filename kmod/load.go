//go:build linux

package kmod

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// moduleInitCompressedFile is MODULE_INIT_COMPRESSED_FILE from
// <uapi/linux/module.h>: the kernel decompresses the file itself.
const moduleInitCompressedFile = 4

// LoadError is a module that the kernel refused to load, or whose init
// failed. KernelLog holds what the kernel logged while it tried.
type LoadError struct {
	Path      string
	Err       error
	KernelLog []string
	// InitRan is set when the module's init was seen running: the kernel
	// took the file, and Err is what the init returned (finit_module
	// returns it as it is), not the loader's verdict on the file.
	InitRan bool
	// Took is how long finit_module took.
	Took time.Duration
}

// loaderComplaint reports a kernel log line of the module loader refusing a
// file (kernel/module/*.c), as opposed to what a module's init logs.
func loaderComplaint(line string) bool {
	for _, s := range []string{"version magic", "disagrees about version of symbol", "no symbol version for",
		"Unknown symbol", "Invalid ELF", "invalid ELF", "bad vermagic", "module has bad taint", "Module len",
		"module format", "section header", "is not an ELF", "Unknown rela relocation", "Unsupported relocation"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load kernel module %s: %v", e.Path, e.Err)
	complained := false
	for _, l := range e.KernelLog {
		complained = complained || loaderComplaint(l)
	}
	switch {
	case e.InitRan:
		fmt.Fprintf(&b, " (returned by the module's own init after %v: the kernel accepted the file and ran it; the module's code chose this errno)", e.Took.Round(time.Millisecond))
	case errors.Is(e.Err, unix.ENOEXEC), errors.Is(e.Err, unix.EINVAL) && complained:
		b.WriteString(" (is it built for the running kernel? `uname -r` must match its vermagic)")
	case errors.Is(e.Err, unix.EINVAL):
		fmt.Fprintf(&b, " (after %v: the loader refused the file, or the module's init returned it; the kernel log shows no loader complaint)", e.Took.Round(time.Millisecond))
	case errors.Is(e.Err, unix.EPERM):
		b.WriteString(" (loading needs root with CAP_SYS_MODULE, and a kernel with module loading enabled)")
	case errors.Is(e.Err, unix.ENOSYS):
		b.WriteString(" (this kernel was built without module support: use the VM harness, `kqbench vm`)")
	}
	if len(e.KernelLog) > 0 {
		b.WriteString("; kernel log:")
		for _, l := range e.KernelLog {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

func (e *LoadError) Unwrap() error { return e.Err }

// LoadFile loads one module file with the given parameters ("" for none). A
// module that is already loaded is not an error. Compressed files are handed
// to the kernel to decompress (MODULE_INIT_COMPRESSED_FILE) and decompressed
// in Go when the kernel cannot.
//
// finit_module returns the loader's error for a file it refuses and the
// module init's return value for one whose init fails: a LoadError tells
// them apart by watching for the module's init (its /sys/module entry,
// made just before the init runs) while the call lasts.
func LoadFile(path, params string) error {
	log := OpenKmsg()
	defer log.Close()
	name := ModuleName(path)
	_, before := os.Stat(sysInitstate(name))
	var w *initWatch
	if before != nil { // not there yet: its appearance is the init's start
		w = watchInit(name)
	}
	start := time.Now()
	err := loadFile(path, params)
	took := time.Since(start)
	ran := w.stop()
	if err == nil || errors.Is(err, unix.EEXIST) {
		return nil
	}
	return &LoadError{Path: path, Err: err, KernelLog: log.Lines(), InitRan: ran, Took: took}
}

func sysInitstate(name string) string { return "/sys/module/" + name + "/initstate" }

// initWatch polls for a module's /sys/module entry: the kernel makes it
// (mod_sysfs_setup) after every check of the file and just before the
// module's init runs, and removes it again when the init fails. An init
// that fails within a poll may go unseen (InitRan false, the message
// hedges); one that waits for anything (a handshake, a timer) is seen.
type initWatch struct {
	quit chan struct{}
	done chan bool
}

func watchInit(name string) *initWatch {
	w := &initWatch{quit: make(chan struct{}), done: make(chan bool, 1)}
	p := sysInitstate(name)
	go func() {
		for {
			if _, err := os.Stat(p); err == nil {
				w.done <- true
				return
			}
			select {
			case <-w.quit:
				w.done <- false
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return w
}

// stop ends the watch and reports whether the init was seen.
func (w *initWatch) stop() bool {
	if w == nil {
		return false
	}
	close(w.quit)
	return <-w.done
}

func loadFile(path, params string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	flags := 0
	if compression(path) != "" {
		flags = moduleInitCompressedFile
	}
	err = unix.FinitModule(int(f.Fd()), params, flags)
	if err == nil || flags == 0 || !(errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL)) {
		return err
	}
	// The kernel cannot decompress this format: do it here.
	img, rerr := ReadModuleFile(path)
	if rerr != nil {
		return fmt.Errorf("%w (and decompressing in Go failed: %v)", err, rerr)
	}
	return unix.InitModule(img, params)
}

// LoadFiles loads files in order, stopping at the first failure.
func LoadFiles(paths ...string) error {
	for _, p := range paths {
		if err := LoadFile(p, ""); err != nil {
			return err
		}
	}
	return nil
}

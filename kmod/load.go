//go:build linux

package kmod

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// moduleInitCompressedFile is MODULE_INIT_COMPRESSED_FILE from
// <uapi/linux/module.h>: the kernel decompresses the file itself.
const moduleInitCompressedFile = 4

// LoadError is a module that the kernel refused to load. KernelLog holds what
// the kernel logged while it tried.
type LoadError struct {
	Path      string
	Err       error
	KernelLog []string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load kernel module %s: %v", e.Path, e.Err)
	switch {
	case errors.Is(e.Err, unix.ENOEXEC), errors.Is(e.Err, unix.EINVAL) && len(e.KernelLog) > 0:
		b.WriteString(" (is it built for the running kernel? `uname -r` must match its vermagic)")
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
func LoadFile(path, params string) error {
	log := OpenKmsg()
	defer log.Close()
	err := loadFile(path, params)
	if err == nil || errors.Is(err, unix.EEXIST) {
		return nil
	}
	return &LoadError{Path: path, Err: err, KernelLog: log.Lines()}
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

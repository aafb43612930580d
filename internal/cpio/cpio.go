// Package cpio writes the "newc" cpio archives that the Linux kernel unpacks
// as an initramfs. It writes only what an initramfs needs: directories,
// regular files, symbolic links and device nodes, all owned by root.
package cpio

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Mode bits of cpio entries (the same as in stat(2)).
const (
	TypeDir     = 0o040000
	TypeRegular = 0o100000
	TypeSymlink = 0o120000
	TypeChar    = 0o020000
)

// Writer writes a newc archive. Call Close to write the trailer. Errors are
// sticky: after the first, every call returns it, so a caller may check only
// the result of Close.
type Writer struct {
	w     io.Writer
	n     int64
	ino   uint32
	dirs  map[string]bool
	err   error
	mtime int64
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, ino: 1, dirs: map[string]bool{".": true, "": true}}
}

type header struct {
	name                 string
	mode                 uint32
	size                 int64
	nlink                uint32
	devmajor, devminor   uint32
	rdevmajor, rdevminor uint32
}

func (cw *Writer) writeHeader(h header) error {
	if cw.err != nil {
		return cw.err
	}
	name := strings.TrimPrefix(h.name, "/")
	if h.nlink == 0 {
		h.nlink = 1
	}
	if h.size > 0xffffffff {
		return cw.fail(fmt.Errorf("%s is %d bytes, over the newc limit of 4 GiB", name, h.size))
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		cw.ino, h.mode, 0, 0, h.nlink, uint32(cw.mtime), uint32(h.size),
		h.devmajor, h.devminor, h.rdevmajor, h.rdevminor, len(name)+1, 0)
	cw.ino++
	if err := cw.write([]byte(hdr + name + "\x00")); err != nil {
		return err
	}
	return cw.pad()
}

func (cw *Writer) fail(err error) error {
	if cw.err == nil {
		cw.err = fmt.Errorf("cpio: %w", err)
	}
	return cw.err
}

func (cw *Writer) write(b []byte) error {
	if cw.err != nil {
		return cw.err
	}
	n, err := cw.w.Write(b)
	cw.n += int64(n)
	if err != nil {
		cw.err = fmt.Errorf("cpio: write: %w", err)
	}
	return cw.err
}

func (cw *Writer) pad() error {
	if r := cw.n % 4; r != 0 {
		return cw.write(make([]byte, 4-r))
	}
	return nil
}

// parents adds the directories above name that were not written yet.
func (cw *Writer) parents(name string) error {
	name = strings.Trim(name, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return nil
	}
	return cw.Dir(name[:i], 0o755)
}

// Dir adds a directory (and any missing parents).
func (cw *Writer) Dir(name string, perm os.FileMode) error {
	name = strings.Trim(name, "/")
	if cw.dirs[name] {
		return nil
	}
	if err := cw.parents(name); err != nil {
		return err
	}
	cw.dirs[name] = true
	return cw.writeHeader(header{name: name, mode: TypeDir | uint32(perm.Perm()), nlink: 2})
}

// File adds a regular file with the given content.
func (cw *Writer) File(name string, perm os.FileMode, data []byte) error {
	if err := cw.parents(name); err != nil {
		return err
	}
	if err := cw.writeHeader(header{name: name, mode: TypeRegular | uint32(perm.Perm()), size: int64(len(data))}); err != nil {
		return err
	}
	if err := cw.write(data); err != nil {
		return err
	}
	return cw.pad()
}

// CopyFile adds the host file src as name, keeping its permission bits.
func (cw *Writer) CopyFile(name, src string) error {
	if cw.err != nil {
		return cw.err
	}
	f, err := os.Open(src)
	if err != nil {
		return cw.fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return cw.fail(err)
	}
	if !st.Mode().IsRegular() {
		return cw.fail(fmt.Errorf("%s is not a regular file", src))
	}
	if err := cw.parents(name); err != nil {
		return err
	}
	if err := cw.writeHeader(header{name: name, mode: TypeRegular | uint32(st.Mode().Perm()), size: st.Size()}); err != nil {
		return err
	}
	n, err := io.Copy(writerFunc(cw.write), f)
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%s changed size while being archived", src)
	}
	if err != nil {
		return cw.fail(fmt.Errorf("copy %s: %w", src, err))
	}
	return cw.pad()
}

type writerFunc func([]byte) error

func (f writerFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Symlink adds a symbolic link name pointing at target.
func (cw *Writer) Symlink(name, target string) error {
	if err := cw.parents(name); err != nil {
		return err
	}
	if err := cw.writeHeader(header{name: name, mode: TypeSymlink | 0o777, size: int64(len(target))}); err != nil {
		return err
	}
	if err := cw.write([]byte(target)); err != nil {
		return err
	}
	return cw.pad()
}

// CharDev adds a character device node.
func (cw *Writer) CharDev(name string, perm os.FileMode, major, minor uint32) error {
	if err := cw.parents(name); err != nil {
		return err
	}
	return cw.writeHeader(header{name: name, mode: TypeChar | uint32(perm.Perm()), rdevmajor: major, rdevminor: minor})
}

// Close writes the trailer. It does not close the underlying writer.
func (cw *Writer) Close() error {
	if err := cw.writeHeader(header{name: "TRAILER!!!"}); err != nil {
		return err
	}
	return cw.err
}

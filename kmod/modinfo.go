//go:build linux

package kmod

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// Modinfo is the content of a module's .modinfo ELF section.
type Modinfo struct {
	// Name is the module's name ("quic"), from the name= field.
	Name string
	// Depends lists the modules it needs, from the depends= field.
	Depends []string
	// Vermagic is the kernel release and build options it was built for.
	Vermagic string
	// Version and Srcversion are the module's version strings, if any.
	Version, Srcversion string
	// Fields holds every key=value pair in file order (keys may repeat).
	Fields [][2]string
}

// ModuleName turns a module file name (quic.ko, sch_netem.ko.xz,
// ip6-udp-tunnel.ko) into the name the kernel uses (dashes become
// underscores).
func ModuleName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// compression names how a module file is compressed, from its suffix.
func compression(path string) string {
	switch {
	case strings.HasSuffix(path, ".ko.xz"):
		return "xz"
	case strings.HasSuffix(path, ".ko.gz"):
		return "gzip"
	case strings.HasSuffix(path, ".ko.zst"):
		return "zstd"
	}
	return ""
}

// ReadModuleFile returns the uncompressed ELF image of a module file.
func ReadModuleFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kernel module: %w", err)
	}
	var r io.Reader
	switch compression(path) {
	case "":
		return raw, nil
	case "xz":
		r, err = xz.NewReader(bytes.NewReader(raw))
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(raw))
	default:
		return nil, fmt.Errorf("kernel module %s: zstd-compressed modules cannot be decompressed here; decompress it with unzstd first", path)
	}
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %s stream: %w", path, compression(path), err)
	}
	img, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: decompress %s: %w", path, compression(path), err)
	}
	return img, nil
}

// ReadModinfo reads the .modinfo section of a module file (.ko, .ko.xz, .ko.gz).
func ReadModinfo(path string) (*Modinfo, error) {
	img, err := ReadModuleFile(path)
	if err != nil {
		return nil, err
	}
	mi, err := ParseModinfo(img)
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", path, err)
	}
	if mi.Name == "" {
		mi.Name = ModuleName(path)
	}
	return mi, nil
}

// ParseModinfo parses the .modinfo section of an uncompressed module image.
func ParseModinfo(img []byte) (*Modinfo, error) {
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("not an ELF kernel module: %w", err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("no .modinfo section: not a kernel module")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .modinfo: %w", err)
	}
	mi := &Modinfo{}
	for _, entry := range bytes.Split(data, []byte{0}) {
		k, v, ok := strings.Cut(string(entry), "=")
		if !ok {
			continue
		}
		mi.Fields = append(mi.Fields, [2]string{k, v})
		switch k {
		case "name":
			mi.Name = v
		case "depends":
			for _, d := range strings.Split(v, ",") {
				if d != "" {
					mi.Depends = append(mi.Depends, d)
				}
			}
		case "vermagic":
			mi.Vermagic = v
		case "version":
			mi.Version = v
		case "srcversion":
			mi.Srcversion = v
		}
	}
	return mi, nil
}

// KernelRelease returns the kernel release a module was built for (the first
// word of its vermagic).
func (m *Modinfo) KernelRelease() string {
	rel, _, _ := strings.Cut(m.Vermagic, " ")
	return rel
}

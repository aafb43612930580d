//go:build linux

package kmod_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kmod/debkernel"
)

// guestTree is the Debian guest kernel's module tree from the cache.
func guestTree(t *testing.T) *kmod.Tree {
	t.Helper()
	k, err := debkernel.Cached(debkernel.Options{})
	if err != nil {
		if testenv.Required("vm") {
			t.Fatalf("no guest kernel in the cache %s: %v", debkernel.DefaultCacheDir(), err)
		}
		t.Skipf("no guest kernel in the cache %s (run `make kernel`, or set $%s): %v", debkernel.DefaultCacheDir(), debkernel.CacheEnv, err)
	}
	tr, err := kmod.OpenTree(k.Modules)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestModuleName(t *testing.T) {
	for in, want := range map[string]string{
		"quic.ko": "quic", "/a/b/sch_netem.ko.xz": "sch_netem", "ip6-udp-tunnel.ko.zst": "ip6_udp_tunnel", "x.ko.gz": "x",
	} {
		if got := kmod.ModuleName(in); got != want {
			t.Errorf("ModuleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadModinfoOfDebianModule(t *testing.T) {
	tr := guestTree(t)
	p := tr.Path("tls")
	if !strings.HasSuffix(p, ".ko.xz") {
		t.Fatalf("tls module path %q: want an xz-compressed module", p)
	}
	mi, err := kmod.ReadModinfo(p)
	if err != nil {
		t.Fatal(err)
	}
	if mi.Name != "tls" || mi.KernelRelease() != tr.Release() {
		t.Errorf("modinfo name %q release %q; want tls, %s", mi.Name, mi.KernelRelease(), tr.Release())
	}
	if !slices.ContainsFunc(mi.Fields, func(f [2]string) bool { return f[0] == "alias" && f[1] == "tcp-ulp-tls" }) {
		t.Errorf("tls modinfo lacks alias=tcp-ulp-tls: %v", mi.Fields)
	}
}

func TestResolveOrdersDependenciesFirst(t *testing.T) {
	tr := guestTree(t)
	order, err := tr.Resolve("9p", "9pnet_virtio")
	if err != nil {
		t.Fatal(err)
	}
	idx := func(name string) int {
		return slices.IndexFunc(order, func(p string) bool { return kmod.ModuleName(p) == name })
	}
	for _, pair := range [][2]string{{"9pnet", "9p"}, {"netfs", "9p"}, {"9pnet", "9pnet_virtio"}} {
		if a, b := idx(pair[0]), idx(pair[1]); a < 0 || b < 0 || a > b {
			t.Errorf("order %v: %s must come before %s", order, pair[0], pair[1])
		}
	}
	if n := len(order); n != len(slices.Compact(slices.Clone(order))) {
		t.Errorf("order has duplicates: %v", order)
	}
	if _, err := tr.Resolve("no_such_module"); err == nil || !strings.Contains(err.Error(), "no_such_module is not in") {
		t.Errorf("Resolve(unknown) = %v", err)
	}
	if !tr.Builtin("virtio_pci") || tr.Path("virtio_pci") != "" || !tr.Has("virtio_pci") {
		t.Errorf("virtio_pci should be built in")
	}
	if got, err := tr.Resolve("virtio_pci"); err != nil || len(got) != 0 {
		t.Errorf("Resolve(built-in) = %v, %v; want nothing to load", got, err)
	}
}

func TestResolveFileRejectsOtherKernel(t *testing.T) {
	tr := guestTree(t)
	// A module file of another release: a copy of a real module in a tree
	// that claims another release name.
	dir := filepath.Join(t.TempDir(), "6.1.0-other")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "modules.dep"), nil, 0o644)
	other, err := kmod.OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.ResolveFile(tr.Path("sch_netem"))
	if err == nil || !strings.Contains(err.Error(), "was built for kernel "+tr.Release()) {
		t.Errorf("ResolveFile across kernels = %v", err)
	}
}

func TestResolveFileOfQUICModule(t *testing.T) {
	ko := os.Getenv("KQUIC_MODULE")
	if ko == "" {
		t.Skip("KQUIC_MODULE is not set: no quic.ko to inspect")
	}
	tr := guestTree(t)
	order, err := tr.ResolveFile(ko)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range order {
		names = append(names, kmod.ModuleName(p))
	}
	if names[len(names)-1] != "quic" || !slices.Contains(names, "udp_tunnel") || !slices.Contains(names, "ip6_udp_tunnel") {
		t.Errorf("load order for quic.ko = %v; want udp_tunnel, ip6_udp_tunnel, then quic", names)
	}
}

func TestOpenTreeWithoutModulesDep(t *testing.T) {
	_, err := kmod.OpenTree(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "depmod") {
		t.Errorf("OpenTree(empty) = %v, want advice to run depmod", err)
	}
}

func TestReadModinfoRejectsNonModules(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junk.ko")
	os.WriteFile(p, []byte("not an ELF file"), 0o644)
	if _, err := kmod.ReadModinfo(p); err == nil || !strings.Contains(err.Error(), "not an ELF kernel module") {
		t.Errorf("ReadModinfo(junk) = %v", err)
	}
	xzJunk := filepath.Join(t.TempDir(), "junk.ko.xz")
	os.WriteFile(xzJunk, []byte("not xz"), 0o644)
	if _, err := kmod.ReadModinfo(xzJunk); err == nil || !strings.Contains(err.Error(), "xz") {
		t.Errorf("ReadModinfo(bad xz) = %v", err)
	}
}

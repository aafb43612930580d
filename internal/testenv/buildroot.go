//go:build linux

package testenv

import (
	"net/http"
	"os"
	"testing"
	"time"

	"kquic.dev/kmod/modbuild"
)

// ModuleBuildRoot runs the test only where `kqbench module build` can build
// for the Debian guest kernel: as root, with debootstrap, and with the build
// root in the cache or the Debian mirror answering to make it (minutes, once
// per cache directory). It skips (fails where $KQUIC_REQUIRE has "tools")
// otherwise, and where $KQUIC_KERNEL names a kernel of its own.
func ModuleBuildRoot(t testing.TB) {
	t.Helper()
	HostOnly(t, "it builds in the build root and boots guests")
	Root(t)
	if os.Getenv("KQUIC_KERNEL") != "" {
		t.Skip("$KQUIC_KERNEL names a kernel of its own: the test module is built for the cached Debian guest kernel")
	}
	Tool(t, "debootstrap", "debootstrap")
	if _, err := modbuild.CachedRoot(modbuild.Options{}); err == nil {
		return
	}
	url := modbuild.MirrorRelease(modbuild.Options{})
	c := &http.Client{Timeout: 15 * time.Second}
	resp, err := c.Head(url)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = &os.PathError{Op: "HEAD", Path: url, Err: os.ErrNotExist}
		}
	}
	if err != nil {
		if Required(ToolsFeature) {
			t.Fatalf("no build root in the cache, and the Debian mirror does not answer to make one: %v", err)
		}
		t.Skipf("no build root in the cache, and the Debian mirror does not answer to make one (needs network once): %v", err)
	}
	t.Log("no build root in the cache yet: the first build makes it (minutes, once)")
}

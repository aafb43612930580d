//go:build linux

package debkernel_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/debkernel"
)

// These tests ask Debian's mirror (the only network this project's machines
// reach) and use the kernel `make test` fetched into the cache.

func cached(t *testing.T) *debkernel.Kernel {
	t.Helper()
	k, err := debkernel.Cached(debkernel.Options{})
	if err != nil {
		if testenv.Required("vm") {
			t.Fatalf("no cached kernel: %v", err)
		}
		t.Skipf("no cached kernel (run `kqbench kernel fetch`): %v", err)
	}
	return k
}

func TestCachedKernelIsComplete(t *testing.T) {
	k := cached(t)
	if k.Release != debkernel.DefaultRelease+"-"+debkernel.DefaultFlavour && k.Note == "" {
		t.Errorf("cached release %s differs from the pin %s without a note", k.Release, debkernel.DefaultRelease)
	}
	for _, p := range []string{k.Image, k.Modules + "/modules.dep", k.Modules + "/modules.builtin", k.Modules + "/config"} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	cfg, _ := os.ReadFile(k.Modules + "/config")
	for _, opt := range []string{"CONFIG_TLS=m", "CONFIG_NET_SCH_NETEM=m", "CONFIG_VETH=m", "CONFIG_NET_HANDSHAKE=y", "CONFIG_MODULE_DECOMPRESS=y", "CONFIG_DEBUG_INFO_BTF=y"} {
		if !strings.Contains(string(cfg), "\n"+opt+"\n") {
			t.Errorf("guest kernel config lacks %s", opt)
		}
	}
}

const noNet = "the guest has no route to Debian's mirror"

func TestMissingReleaseIsAClearError(t *testing.T) {
	testenv.HostOnly(t, noNet)
	cached(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := debkernel.Ensure(ctx, debkernel.Options{Release: "0.0.1+nosuch", Exact: true})
	if err == nil || !strings.Contains(err.Error(), "linux-binary-0.0.1+nosuch-amd64 is not in trixie-backports") {
		t.Fatalf("Ensure(missing, exact) = %v", err)
	}
}

func TestGoneReleaseFallsBackToTheCurrentOne(t *testing.T) {
	testenv.HostOnly(t, noNet)
	k := cached(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := debkernel.Ensure(ctx, debkernel.Options{Release: "0.0.1+gone"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Note, "0.0.1+gone is no longer in trixie-backports") || !strings.Contains(got.Note, "linux-image-amd64") {
		t.Errorf("note %q does not say which kernel was used instead", got.Note)
	}
	t.Logf("current kernel of the suite: %s (cached: %s)", got.Release, k.Release)
}

func TestUnreachableMirror(t *testing.T) {
	testenv.HostOnly(t, "it runs apt-get, which the guest shares read-only")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := debkernel.Ensure(ctx, debkernel.Options{CacheDir: t.TempDir(), Mirror: "http://127.0.0.1:9/debian"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:9") {
		t.Fatalf("Ensure(unreachable mirror) = %v, want an error naming the mirror", err)
	}
}

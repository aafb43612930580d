//go:build linux

package ktls

import (
	"crypto/tls"
	"errors"
	"io"
	"testing"

	"kquic.dev/kmod"
)

// TestNoKernelTLS runs where the kernel has no TLS ULP (such as a host
// without the tls module): the error must say so, and Config.Fallback must
// keep the same connection working in userspace.
func TestNoKernelTLS(t *testing.T) {
	if kmod.Probe(kmod.FeatureTLS) == nil {
		t.Skip("this kernel has TLS; the no-kTLS path is tested where it has not")
	}
	for _, fallback := range []bool{false, true} {
		c, s := tcpPair(t)
		go func() {
			p := tls.Server(s, serverConfig(t, tls.VersionTLS13))
			if p.Handshake() == nil {
				p.Write([]byte("userspace"))
				p.Read(make([]byte, 1))
			}
		}()
		k, err := Client(testCtx(t), c, &Config{TLS: clientConfig(t, tls.VersionTLS13), Fallback: fallback})
		if !fallback {
			var ke *KernelError
			if !errors.Is(err, ErrNoKernelTLS) || !errors.As(err, &ke) {
				t.Fatalf("err = %v, want a *KernelError wrapping ErrNoKernelTLS", err)
			}
			t.Logf("%v", err)
			continue
		}
		if err != nil || k.KernelTLS() || !errors.Is(k.FallbackReason(), ErrNoKernelTLS) {
			t.Fatalf("fallback: %v; reason %v", err, k.FallbackReason())
		}
		got := make([]byte, 9)
		if _, err := io.ReadFull(k, got); err != nil || string(got) != "userspace" {
			t.Fatalf("read %q, %v", got, err)
		}
		if err := k.KeyUpdate(false); err == nil {
			t.Error("KeyUpdate in fallback did not fail")
		}
		k.Close()
	}
}

package quicnet_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/quicnet"
)

// TestAutoChoice is the one-binary test: the same test binary, built
// without tags, runs over kernel QUIC in the guest with the module and
// over quic-go on the host without it, with nothing to set. The module's
// presence is asked of kmod (which opens its own IPPROTO_QUIC socket),
// and Auto's choice is seen by the listener, both ends of a connection,
// and an exchange on it. In a -tags kquic build Auto is kernel QUIC
// whatever the machine, and fails where the module is missing; in a
// -tags nokquic build it is quic-go.
func TestAutoChoice(t *testing.T) {
	t.Setenv(quicnet.ImplementationEnv, "")
	probe := kmod.Probe(kmod.FeatureQUIC)
	if probe != nil && testenv.Required("quic") {
		t.Fatalf("$%s requires kernel QUIC: %v", testenv.RequireEnv, probe)
	}
	built := quicnet.Implementations()
	want := quicnet.QuicGo
	switch {
	case !slices.Contains(built, quicnet.Kernel):
	case !slices.Contains(built, quicnet.QuicGo), probe == nil:
		want = quicnet.Kernel
	}
	t.Logf("built in %v; the module: %v; Auto should choose %s", built, probe, want)
	if got := quicnet.Implementation(); got != want {
		t.Fatalf("Implementation() = %s, want %s", got, want)
	}
	ctls, stls := tlsConfigs(t)
	if want == quicnet.Kernel && probe != nil {
		_, err := quicnet.Listen("udp", "127.0.0.1:0", stls, nil)
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("kernel QUIC alone, no module: Listen = %v, want an error matching errors.ErrUnsupported", err)
		}
		return
	}
	ln := listen(t, stls, nil)
	cli, srv := connect(t, ln, ctls, nil)
	if ln.Implementation() != want || cli.Implementation() != want || srv.Implementation() != want {
		t.Errorf("listener %s, client %s, server %s; want %s", ln.Implementation(), cli.Implementation(), srv.Implementation(), want)
	}
	echoStreams(srv)
	if got := echo(t, cli, []byte("one binary")); string(got) != "one binary" {
		t.Errorf("echo over %s: %q", want, got)
	}
}

// TestBuildTags: what each build links. The default Linux build has both
// implementations; -tags kquic has no quic-go (kernel QUIC alone, as the
// tag always meant); -tags nokquic has no kernel QUIC bindings.
func TestBuildTags(t *testing.T) {
	testenv.HostOnly(t, "asks the go tool, which the host pass has")
	for _, tc := range []struct {
		tags          string
		quicGo, kquic bool
	}{{"", true, true}, {"kquic", false, true}, {"nokquic", true, false}} {
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", "-tags", tc.tags, "kquic.dev/quicnet").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps -tags %q kquic.dev/quicnet: %v\n%s", tc.tags, err, out)
		}
		deps := strings.Fields(string(out))
		quicGo, kquic := slices.Contains(deps, "github.com/quic-go/quic-go"), slices.Contains(deps, "kquic.dev/kquic")
		if quicGo != tc.quicGo || kquic != tc.kquic {
			t.Errorf("-tags %q: quicnet links quic-go %v, kquic %v; want %v, %v", tc.tags, quicGo, kquic, tc.quicGo, tc.kquic)
		}
	}
}

//go:build linux

package native

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
)

// openssl is ktls's tool: openssl s_server and s_client -ktls, where the
// openssl has kTLS (Debian's has not).
type openssl struct{}

func (openssl) notApplicable(c matrix.Cell) string {
	if !c.Crypto {
		return "kernel TLS always encrypts (see tcp)"
	}
	return ""
}

func (openssl) missing() (results.Status, string) {
	ok, err := opensslKTLS()
	if err != nil {
		return results.StatusNA, fmt.Sprintf("native: openssl: %v (apt-get install openssl)", err)
	}
	if !ok {
		return results.StatusNA, "native: this openssl has no kTLS (s_server -help lists no -ktls; Debian's OpenSSL is built without enable-ktls): install an OpenSSL 3 built with enable-ktls to measure the ktls column natively"
	}
	return results.StatusUnavailable, "native: openssl s_server/s_client -ktls cells are not implemented yet (this openssl has -ktls)"
}

func (openssl) measure(context.Context, *mode.Env, *topo.Topology, matrix.Cell, *window) (results.Sample, error) {
	return results.Sample{}, errors.New("native ktls: not implemented")
}

// opensslKTLS reports whether the openssl program's s_server has -ktls.
var opensslKTLS = sync.OnceValues(func() (bool, error) {
	p, err := exec.LookPath("openssl")
	if err != nil {
		return false, err
	}
	out, _ := exec.Command(p, "s_server", "-help").CombinedOutput()
	return OpenSSLHasKTLS(out), nil
})

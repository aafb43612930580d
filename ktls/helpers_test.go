//go:build linux

package ktls

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/kmod"
)

// requireKTLS skips the test when the kernel has no TLS ULP, or fails it
// when KQUIC_REQUIRE lists "tls" (as the guest runs do).
func requireKTLS(t testing.TB) {
	t.Helper()
	if err := kmod.Probe(kmod.FeatureTLS); err != nil {
		if testFallback() {
			t.Logf("kernel TLS not available (%v); running in userspace fallback (KTLS_TEST_FALLBACK)", err)
			return
		}
		for _, f := range strings.Split(os.Getenv("KQUIC_REQUIRE"), ",") {
			if strings.TrimSpace(f) == "tls" {
				t.Fatalf("kernel TLS required (KQUIC_REQUIRE) but not available: %v", err)
			}
		}
		t.Skipf("kernel TLS not available: %v", err)
	}
}

// testPKI is a private CA and a leaf for "server.test" and 127.0.0.1.
type testPKI struct {
	pool          *x509.CertPool
	leaf          tls.Certificate
	caPEM         []byte
	certPEM       []byte
	keyPEM        []byte
	caCertificate *x509.Certificate
}

var (
	pkiOnce sync.Once
	pki     *testPKI
	pkiErr  error
)

func getPKI(t testing.TB) *testPKI {
	t.Helper()
	pkiOnce.Do(func() { pki, pkiErr = newPKI() })
	if pkiErr != nil {
		t.Fatalf("generating test certificates: %v", pkiErr)
	}
	return pki
}

func newPKI() (*testPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ktls test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "server.test"},
		DNSNames:     []string{"server.test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	p := &testPKI{pool: x509.NewCertPool(), caCertificate: ca}
	p.pool.AddCert(ca)
	p.leaf = tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	p.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	p.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return p, nil
}

// writePEM writes ca.pem, cert.pem and key.pem to dir.
func (p *testPKI) writePEM(t testing.TB, dir string) (ca, cert, key string) {
	t.Helper()
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for name, b := range map[string][]byte{ca: p.caPEM, cert: p.certPEM, key: p.keyPEM} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

func serverConfig(t testing.TB, version uint16, suites ...uint16) *tls.Config {
	p := getPKI(t)
	return &tls.Config{
		Certificates: []tls.Certificate{p.leaf},
		MinVersion:   version,
		MaxVersion:   version,
		CipherSuites: suites,
	}
}

func clientConfig(t testing.TB, version uint16, suites ...uint16) *tls.Config {
	p := getPKI(t)
	return &tls.Config{
		RootCAs:      p.pool,
		ServerName:   "server.test",
		MinVersion:   version,
		MaxVersion:   version,
		CipherSuites: suites,
	}
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t testing.TB) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback: %v", err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatalf("accept: %v", r.err)
	}
	t.Cleanup(func() { c.Close(); r.c.Close() })
	return c.(*net.TCPConn), r.c.(*net.TCPConn)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// suiteCase names a version and suite for table tests.
type suiteCase struct {
	name    string
	version uint16
	suite   uint16 // 0: let crypto/tls choose (TLS 1.3)
}

var tls12Suites = []suiteCase{
	{"TLS12-AES128GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{"TLS12-AES256GCM", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
	{"TLS12-CHACHA20", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
}

func (sc suiteCase) suites() []uint16 {
	if sc.suite == 0 || sc.version == tls.VersionTLS13 {
		return nil
	}
	return []uint16{sc.suite}
}

// testFallback reports whether KTLS_TEST_FALLBACK is set: then the kernel
// tests run through Config.Fallback on a host without kernel TLS, which
// checks the tests themselves (not the kernel path).
func testFallback() bool { return os.Getenv("KTLS_TEST_FALLBACK") != "" }

// kconfig wraps a tls.Config as the kernel tests use it.
func kconfig(c *tls.Config) *Config {
	return &Config{TLS: c, ExpectNoPad: true, ZeroCopySendfile: true, Fallback: testFallback()}
}

// checkKernel fails if c did not end up in the kernel (unless in fallback
// test mode).
func checkKernel(t testing.TB, c *Conn) {
	t.Helper()
	if !c.KernelTLS() && !testFallback() {
		t.Fatalf("connection stayed in userspace: %v", c.FallbackReason())
	}
}

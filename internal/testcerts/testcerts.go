// Package testcerts loads the certificates in testdata/ that the tests use: a
// private CA, a server certificate for "server.test", 127.0.0.1 and ::1, and a
// client certificate for mutual TLS. They are fixtures, valid until 2036; run
// `go generate ./internal/testcerts` to make new ones.
package testcerts

//go:generate go run ./gen -out ../../testdata/certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Dir is the directory of the certificate files.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "certs")
}

// Path returns the path of one file of the set (ca.pem, server.pem,
// server-key.pem, client.pem, client-key.pem).
func Path(name string) string { return filepath.Join(Dir(), name) }

// Pool returns a pool holding the private CA.
func Pool() (*x509.CertPool, error) {
	b, err := os.ReadFile(Path("ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("testcerts: %w", err)
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("testcerts: %s holds no certificate", Path("ca.pem"))
	}
	return p, nil
}

// Server returns the server's certificate and key.
func Server() (tls.Certificate, error) {
	return tls.LoadX509KeyPair(Path("server.pem"), Path("server-key.pem"))
}

// Client returns the client's certificate and key, for mutual TLS.
func Client() (tls.Certificate, error) {
	return tls.LoadX509KeyPair(Path("client.pem"), Path("client-key.pem"))
}

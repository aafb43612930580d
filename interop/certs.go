package interop

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"time"

	"kquic.dev/internal/selfsigned"
)

// certs is a server certificate for "server" and the loopback addresses,
// made for a run, with its PEM files in dir for programs.
type certs struct {
	server            tls.Certificate
	pool              *x509.CertPool
	caFile            string
	certFile, keyFile string
}

// newCerts makes them; big pads the certificate with an unused extension of
// 9 KB, so that the server's first flight outgrows three times a client's
// first datagram (amplificationlimit).
func newCerts(dir string, big bool) (*certs, error) {
	o := selfsigned.Options{Names: []string{"server", "localhost"}, Valid: 48 * time.Hour}
	if big {
		o.Pad = 9000
	}
	cert, pool, err := selfsigned.New(o)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := selfsigned.PEM(cert)
	if err != nil {
		return nil, err
	}
	c := &certs{server: cert, pool: pool, certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	c.caFile = c.certFile // self-signed: the certificate is its own CA
	if err := os.WriteFile(c.certFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	return c, os.WriteFile(c.keyFile, keyPEM, 0o600)
}

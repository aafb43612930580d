//go:build linux

package h3

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"time"

	"kquic.dev/bench/topo"
)

// serverName is the name the mode's certificate is for.
const serverName = "kqbench.test"

var (
	certOnce sync.Once
	certPair tls.Certificate
	certPool *x509.CertPool
	certErr  error
)

// tlsConfigs are a server's and a client's TLS configurations around a
// self-signed certificate made once per process (the ALPN is each
// server's and client's).
func tlsConfigs(keyLog io.Writer) (server, client *tls.Config, err error) {
	certOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			certErr = err
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: serverName},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
			DNSNames: []string{serverName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IP(topo.ServerAddr.AsSlice())},
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			certErr = err
			return
		}
		leaf, _ := x509.ParseCertificate(der)
		certPair = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
		certPool = x509.NewCertPool()
		certPool.AddCert(leaf)
	})
	if certErr != nil {
		return nil, nil, fmt.Errorf("h3 mode: the server's certificate: %w", certErr)
	}
	server = &tls.Config{Certificates: []tls.Certificate{certPair}, KeyLogWriter: keyLog, MinVersion: tls.VersionTLS13}
	client = &tls.Config{RootCAs: certPool, ServerName: serverName, KeyLogWriter: keyLog, MinVersion: tls.VersionTLS13}
	return server, client, nil
}

//go:build linux

package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"
)

// The benchmark's own throwaway certificate: the peers trust exactly it.
var (
	certOnce sync.Once
	certPair tls.Certificate
	certPool *x509.CertPool
	certErr  error
)

const benchServerName = "kqbench.test"

func benchCert() (tls.Certificate, *x509.CertPool, error) {
	certOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			certErr = err
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: benchServerName},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
			DNSNames: []string{benchServerName}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
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
	return certPair, certPool, certErr
}

// KeyPair returns this process's benchmark certificate and key (made once,
// self-signed, for ServerName and 127.0.0.1) and a pool that trusts it,
// for a server and client of another kind than this package's (the h3
// mode's HTTP servers).
func KeyPair() (tls.Certificate, *x509.CertPool, error) { return benchCert() }

// ServerName is the name the benchmark certificate is for, the clients'
// tls.Config.ServerName.
const ServerName = benchServerName

// Certificate returns this process's benchmark certificate (DER), which
// its servers present: a kqbench server sends it to its client, which trusts
// it through Options.PeerCert.
func Certificate() ([]byte, error) {
	cert, _, err := benchCert()
	if err != nil {
		return nil, err
	}
	return cert.Certificate[0], nil
}

// tlsConfigs returns the server and client TLS configurations for a run.
func tlsConfigs(alpn string, o Options) (server, client *tls.Config, err error) {
	cert, pool, err := benchCert()
	if err != nil {
		return nil, nil, err
	}
	if o.PeerCert != nil {
		peer, err := x509.ParseCertificate(o.PeerCert)
		if err != nil {
			return nil, nil, fmt.Errorf("the peer's benchmark certificate: %w", err)
		}
		pool = x509.NewCertPool()
		pool.AddCert(peer)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}, KeyLogWriter: o.KeyLog}
	client = &tls.Config{RootCAs: pool, ServerName: benchServerName, NextProtos: []string{alpn}, KeyLogWriter: o.KeyLog}
	return server, client, nil
}

//go:build linux

package transport

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"

	"kquic.dev/internal/selfsigned"
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
		certPair, certPool, certErr = selfsigned.New(selfsigned.Options{Names: []string{benchServerName}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
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

//go:build linux

package h3

import (
	"crypto/tls"
	"fmt"
	"io"

	"kquic.dev/bench/transport"
)

// serverName is the name the mode's certificate (the benchmark
// transports', made once per process) is for.
const serverName = transport.ServerName

// tlsConfigs are a server's and a client's TLS configurations around the
// process's benchmark certificate (the ALPN is each server's and client's).
func tlsConfigs(keyLog io.Writer) (server, client *tls.Config, err error) {
	pair, pool, err := transport.KeyPair()
	if err != nil {
		return nil, nil, fmt.Errorf("h3 mode: the server's certificate: %w", err)
	}
	server = &tls.Config{Certificates: []tls.Certificate{pair}, KeyLogWriter: keyLog, MinVersion: tls.VersionTLS13}
	client = &tls.Config{RootCAs: pool, ServerName: serverName, KeyLogWriter: keyLog, MinVersion: tls.VersionTLS13}
	return server, client, nil
}

//go:build linux

package web

import (
	"crypto/tls"
	"net"
	"net/http"
	"testing"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
)

func tlsConfigs(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	server, client, err := loadTLS()
	if err != nil {
		t.Fatal(err)
	}
	return server, client
}

// loadTLS is the server's and the client's TLS configuration, from
// testdata/certs.
func loadTLS() (server, client *tls.Config, err error) {
	cert, err := testcerts.Server()
	if err != nil {
		return nil, nil, err
	}
	pool, err := testcerts.Pool()
	if err != nil {
		return nil, nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, &tls.Config{RootCAs: pool, ServerName: "server.test"}, nil
}

// transport starts a server of one transport on loopback and returns its
// client.
type transport struct {
	name  string
	start func(t testing.TB, cfg Config) (Server, *Client)
}

var transports = []transport{
	{"h2/crypto/tls", func(t testing.TB, cfg Config) (Server, *Client) {
		return startTCP(t, cfg, ServeH2TLS, H2TLSClient)
	}},
	{"h2/ktls", func(t testing.TB, cfg Config) (Server, *Client) {
		testenv.Require(t, kmod.FeatureTLS)
		return startTCP(t, cfg, ServeH2KTLS, H2KTLSClient)
	}},
	{"h3/quic-go", startQuicGo},
}

func startTCP(t testing.TB, cfg Config,
	serve func(net.Listener, http.Handler, *tls.Config, Config) (Server, error),
	client func(string, *tls.Config, Config) (*Client, error)) (Server, *Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stls, ctls := tlsConfigs(t)
	srv, err := serve(ln, NewHandler(), stls, cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return srv, newClient(t, srv, client, ctls, cfg)
}

func startQuicGo(t testing.TB, cfg Config) (Server, *Client) {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	stls, ctls := tlsConfigs(t)
	srv, err := ServeH3QuicGo(pc, NewHandler(), stls, cfg)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	return srv, newClient(t, srv, H3QuicGoClient, ctls, cfg)
}

func newClient(t testing.TB, srv Server, client func(string, *tls.Config, Config) (*Client, error), ctls *tls.Config, cfg Config) *Client {
	t.Helper()
	c, err := client(srv.URL(), ctls, cfg)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	c.Server = srv.Settings()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("closing the %s server: %v", c.Name, err)
		}
	})
	return c
}

package interop

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

func init() { RegisterImpl("quic-go", func() (Impl, error) { return QuicGo{}, nil }) }

// QuicGo is quic-go as a library: its own hq-interop and its http3.
type QuicGo struct{}

// Name implements Impl.
func (QuicGo) Name() string { return "quic-go" }

// ALPNs implements Impl.
func (QuicGo) ALPNs() []string { return []string{HQ, H3} }

// Supports implements Impl.
func (QuicGo) Supports(role Role, c *Case) error {
	// keyupdate: quic-go has no call to start one, but updates its keys
	// by itself after its first 100 packets, which the check sees.
	if role == Client {
		return goClientLimits(c)
	}
	return nil
}

func quicGoConfig(v2 bool) *quic.Config {
	c := &quic.Config{MaxIdleTimeout: 30 * time.Second, Allow0RTT: true, HandshakeIdleTimeout: 10 * time.Second}
	if v2 {
		c.Versions = []quic.Version{quic.Version2, quic.Version1}
	}
	return c
}

// Serve implements Impl.
func (QuicGo) Serve(ctx context.Context, cfg ServerConfig) (*net.UDPAddr, func() error, error) {
	laddr, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, nil, err
	}
	udp, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, nil, err
	}
	tr := &quic.Transport{Conn: udp}
	if cfg.Retry {
		tr.VerifySourceAddress = func(net.Addr) bool { return true }
	}
	tconf := &tls.Config{Certificates: []tls.Certificate{cfg.Cert}, NextProtos: []string{cfg.ALPN}, KeyLogWriter: cfg.KeyLog}
	qconf := quicGoConfig(cfg.Version2)
	if cfg.ALPN == H3 {
		srv := &http3.Server{Handler: http.FileServer(http.Dir(cfg.Root)), TLSConfig: http3.ConfigureTLSConfig(tconf), QUICConfig: qconf}
		ln, err := tr.ListenEarly(srv.TLSConfig, qconf)
		if err != nil {
			tr.Close()
			return nil, nil, err
		}
		go srv.ServeListener(ln)
		return udp.LocalAddr().(*net.UDPAddr), func() error { srv.Close(); return tr.Close() }, nil
	}
	ln, err := tr.ListenEarly(tconf, qconf)
	if err != nil {
		tr.Close()
		return nil, nil, err
	}
	go func() {
		for {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go serveHQConn(func() (hqStream, error) { return c.AcceptStream(context.Background()) }, cfg.Root)
		}
	}()
	return udp.LocalAddr().(*net.UDPAddr), tr.Close, nil
}

// Fetch implements Impl.
func (QuicGo) Fetch(ctx context.Context, cfg ClientConfig) error {
	tconf := clientTLS(cfg)
	qconf := quicGoConfig(false)
	if cfg.Version2 {
		qconf.Versions = []quic.Version{quic.Version2}
	}
	for i, g := range groups(cfg) {
		early := cfg.ZeroRTT && i > 0
		var err error
		if cfg.ALPN == H3 {
			err = fetchH3QuicGo(ctx, cfg, tconf, qconf, g, early)
		} else {
			err = fetchHQQuicGo(ctx, cfg, tconf, qconf, g, early)
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", i+1, err)
		}
	}
	return nil
}

func fetchHQQuicGo(ctx context.Context, cfg ClientConfig, tconf *tls.Config, qconf *quic.Config, paths []string, early bool) error {
	var c *quic.Conn
	var err error
	if early {
		c, err = quic.DialAddrEarly(ctx, cfg.Server.String(), tconf, qconf)
	} else {
		c, err = quic.DialAddr(ctx, cfg.Server.String(), tconf, qconf)
	}
	if err != nil {
		return err
	}
	defer c.CloseWithError(0, "")
	return fetchHQ(ctx, func(ctx context.Context) (hqStream, error) { return c.OpenStreamSync(ctx) }, paths, cfg.Download)
}

func fetchH3QuicGo(ctx context.Context, cfg ClientConfig, tconf *tls.Config, qconf *quic.Config, paths []string, early bool) error {
	tr := &http3.Transport{TLSClientConfig: tconf, QUICConfig: qconf}
	if !early {
		// http3.Transport dials for 0-RTT whenever it holds a ticket, and
		// fails the request when the server turns 0-RTT down: a case
		// without 0-RTT dials a plain handshake (a resumed one with a
		// ticket).
		tr.Dial = func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return quic.DialAddr(ctx, addr, tc, qc)
		}
	}
	defer tr.Close()
	method := http.MethodGet
	if early {
		method = http3.MethodGet0RTT
	}
	return fetchH3(ctx, tr, method, cfg, paths)
}

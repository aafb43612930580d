//go:build linux

package h3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"

	"kquic.dev/bench/mode/h3/web"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
	"kquic.dev/kmod"
	"kquic.dev/quicnet"
)

// Ends are where the two ends' sockets belong: each runs fn in its
// network namespace.
type Ends struct {
	Server, Client func(fn func() error) error
}

// Config is what a cell asks of a transport's two ends.
type Config struct {
	// Window is the HTTP layer's stream flow-control window (bytes; 0:
	// each implementation's default).
	Window int
	// UDPRcvBuf is the SO_RCVBUF asked of the UDP sockets (0: theirs).
	UDPRcvBuf int
	// CC is the TCP rows' congestion control ("": the default).
	CC string
	// KeyLog receives the TLS secrets (nil: none).
	KeyLog io.Writer
	// ServerAddr is the server's address (zero: topo.ServerAddr).
	ServerAddr netip.Addr
}

func (c Config) web() web.Config {
	return web.Config{StreamWindow: int64(c.Window), UDPRcvBuf: c.UDPRcvBuf}
}

// serverAddr is the address the server listens on.
func (c Config) serverAddr() netip.Addr {
	if c.ServerAddr.IsValid() {
		return c.ServerAddr
	}
	return topo.ServerAddr
}

func (c Config) addr() string { return netip.AddrPortFrom(c.serverAddr(), 0).String() }

// row is one transport of the mode.
type row struct {
	name string
	quic bool
	// noEarly, noResume and noRcvBuf say why the row has no 0-RTT, no
	// resumption and no --udp-rcvbuf ("": it has).
	noEarly, noResume, noRcvBuf string
	available                   func() error
	// listen starts the server in the namespace do runs in; client makes
	// the client of the server at url, dialing from do's namespace.
	listen func(do func(func() error) error, cfg Config, stls *tls.Config) (web.Server, error)
	client func(url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error)
}

const (
	crypto0RTT   = "crypto/tls has no TLS 1.3 early data (0-RTT) on the client"
	quicnetNoBuf = "quicnet does not expose its UDP socket"
)

func always() error { return nil }

var rows = []row{
	{name: KQUIC, quic: true, noRcvBuf: quicnetNoBuf,
		available: func() error { return quicnet.Available(quicnet.Kernel) },
		listen:    listenQuicnet(quicnet.Kernel), client: quicnetClient(quicnet.Kernel)},
	{name: QuicGo, quic: true, available: always, listen: listenQuicGo, client: quicGoClient},
	{name: Quicnet, quic: true, noRcvBuf: quicnetNoBuf,
		available: func() error { return quicnet.Available(quicnet.QuicGo) },
		listen:    listenQuicnet(quicnet.QuicGo), client: quicnetClient(quicnet.QuicGo)},
	{name: H2KTLS, noEarly: crypto0RTT, noResume: "ktls.Client drops the TLS 1.3 session tickets that arrive after the switch to kernel TLS",
		noRcvBuf: "a TCP row has no UDP socket", available: func() error { return kmod.Probe(kmod.FeatureTLS) },
		listen: tcpListen(web.ServeH2KTLS), client: tcpClient(web.H2KTLSClient)},
	{name: H2CryptoTLS, noEarly: crypto0RTT, noRcvBuf: "a TCP row has no UDP socket", available: always,
		listen: tcpListen(web.ServeH2TLS), client: tcpClient(web.H2TLSClient)},
}

func rowOf(name string) (*row, error) {
	for i := range rows {
		if rows[i].name == name {
			return &rows[i], nil
		}
	}
	return nil, fmt.Errorf("transport %q is not one of --mode h3's: %v", name, Transports())
}

// Start starts transport name's server in e.Server's namespace and returns
// it with its client, whose connections start in e.Client's.
func Start(name string, e Ends, cfg Config) (web.Server, *web.Client, error) {
	r, err := rowOf(name)
	if err != nil {
		return nil, nil, err
	}
	if err := r.available(); err != nil {
		return nil, nil, err
	}
	return r.start(e, cfg)
}

func (r *row) start(e Ends, cfg Config) (web.Server, *web.Client, error) {
	stls, ctls, err := tlsConfigs(cfg.KeyLog)
	if err != nil {
		return nil, nil, err
	}
	srv, err := r.listen(e.Server, cfg, stls)
	if err != nil {
		return nil, nil, fmt.Errorf("server: %w", err)
	}
	cl, err := r.client(srv.URL(), e.Client, cfg, ctls)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	cl.Server = srv.Settings()
	return srv, cl, nil
}

// Listen starts transport name's server alone, in the namespace do runs
// in (a kqbench server's half of two-host mode), with the certificate
// Certificate returns.
func Listen(name string, do func(func() error) error, cfg Config) (web.Server, error) {
	r, err := rowOf(name)
	if err != nil {
		return nil, err
	}
	if err := r.available(); err != nil {
		return nil, err
	}
	stls, _, err := tlsConfigs(nil)
	if err != nil {
		return nil, err
	}
	return r.listen(do, cfg, stls)
}

// Certificate is the certificate (DER) of this process's servers.
func Certificate() ([]byte, error) {
	return transport.Certificate()
}

// NewClient is transport name's client of the server at addr, trusting
// the certificate cert (DER), dialing from the namespace do runs in;
// server is the server's settings.
func NewClient(name string, addr netip.AddrPort, do func(func() error) error, cfg Config, cert []byte, server web.Settings) (*web.Client, error) {
	r, err := rowOf(name)
	if err != nil {
		return nil, err
	}
	if err := r.available(); err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(cert)
	if err != nil {
		return nil, fmt.Errorf("the server's certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	ctls := &tls.Config{RootCAs: pool, ServerName: serverName, KeyLogWriter: cfg.KeyLog, MinVersion: tls.VersionTLS13}
	cl, err := r.client("https://"+addr.String(), do, cfg, ctls)
	if err != nil {
		return nil, err
	}
	cl.Server = server
	return cl, nil
}

// tcpControl sets the congestion control on a socket ("": none).
func tcpControl(cc string) func(network, address string, c syscall.RawConn) error {
	if cc == "" {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("TCP_CONGESTION %s: %w (load tcp_%s: modprobe tcp_%s, or --load tcp_%s in the guest)", cc, serr, cc, cc, cc)
		}
		return nil
	}
}

func tcpListen(serve func(net.Listener, http.Handler, *tls.Config, web.Config) (web.Server, error)) func(func(func() error) error, Config, *tls.Config) (web.Server, error) {
	return func(do func(func() error) error, cfg Config, stls *tls.Config) (web.Server, error) {
		var ln net.Listener
		if err := do(func() (err error) {
			lc := net.ListenConfig{Control: tcpControl(cfg.CC)}
			ln, err = lc.Listen(context.Background(), "tcp", cfg.addr())
			return err
		}); err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
		srv, err := serve(ln, web.NewHandler(), stls, cfg.web())
		if err != nil {
			ln.Close()
			return nil, err
		}
		return srv, nil
	}
}

func tcpClient(client func(string, *tls.Config, web.Config) (*web.Client, error)) func(string, func(func() error) error, Config, *tls.Config) (*web.Client, error) {
	return func(url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error) {
		wc := cfg.web()
		d := &net.Dialer{Control: tcpControl(cfg.CC)}
		wc.DialTCP = func(ctx context.Context, network, address string) (c net.Conn, err error) {
			err = do(func() error {
				c, err = d.DialContext(ctx, network, address)
				return err
			})
			return c, err
		}
		return client(url, ctls, wc)
	}
}

func listenQuicGo(do func(func() error) error, cfg Config, stls *tls.Config) (web.Server, error) {
	var pc *net.UDPConn
	if err := do(func() (err error) {
		pc, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(cfg.addr())))
		return err
	}); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	srv, err := web.ServeH3QuicGo(pc, web.NewHandler(), stls, cfg.web())
	if err != nil {
		pc.Close()
		return nil, err
	}
	return srv, nil
}

func quicGoClient(url string, do func(func() error) error, cfg Config, ctls *tls.Config) (*web.Client, error) {
	wc := cfg.web()
	wc.ListenUDP = func() (c *net.UDPConn, err error) {
		err = do(func() error {
			c, err = net.ListenUDP("udp", nil)
			return err
		})
		return c, err
	}
	return web.H3QuicGoClient(url, ctls, wc)
}

package http3

// Listening: the server's and the package's ListenAndServe functions,
// and the TLS and QUIC configurations they serve with.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	"kquic.dev/quicnet"
)

// ListenAndServe listens on Addr (UDP) with TLSConfig and QUICConfig and
// serves the connections until Shutdown or Close.
func (s *Server) ListenAndServe() error {
	if !hasCertificate(s.TLSConfig) {
		return errors.New("http3: ListenAndServe needs Server.TLSConfig with a certificate (or use ListenAndServeTLS)")
	}
	return s.listenAndServe(s.TLSConfig)
}

// hasCertificate says whether a server can present a certificate with c.
func hasCertificate(c *tls.Config) bool {
	return c != nil && (len(c.Certificates) > 0 || c.GetCertificate != nil || c.GetConfigForClient != nil)
}

// ListenAndServeTLS is ListenAndServe with the certificate and key in
// these PEM files (added to TLSConfig's settings).
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("http3: load the certificate: %w", err)
	}
	var conf *tls.Config
	if s.TLSConfig != nil {
		conf = s.TLSConfig.Clone()
	} else {
		conf = &tls.Config{}
	}
	conf.Certificates = []tls.Certificate{cert}
	return s.listenAndServe(conf)
}

func (s *Server) listenAndServe(conf *tls.Config) error {
	if s.shuttingDown() {
		return ErrServerClosed
	}
	if err := checkAdditionalSettings("Server.AdditionalSettings", s.AdditionalSettings); err != nil {
		return err
	}
	addr := s.Addr
	if addr == "" {
		addr = ":https"
	}
	ln, err := quicnet.ListenEarly("udp", addr, ConfigureTLSConfig(conf), s.quicConfig())
	if err != nil {
		return err
	}
	return s.serve(ln, true)
}

// quicConfig is the QUIC configuration of the listeners the server opens:
// QUICConfig, or 0-RTT allowed when nil, with datagrams for
// EnableDatagrams.
func (s *Server) quicConfig() *quicnet.Config {
	var c quicnet.Config
	if s.QUICConfig != nil {
		c = *s.QUICConfig
	} else {
		c.Allow0RTT = true
	}
	if s.EnableDatagrams {
		c.EnableDatagrams = true
	}
	return &c
}

// ConfigureTLSConfig returns a copy of conf for an HTTP/3 listener, as
// quic-go's: its ALPN is "h3" alone (and so is that of the configurations
// its GetConfigForClient returns), and it takes TLS 1.3 at least. conf's
// session ticket keys are set up before the copy, so that listeners of
// copies of one conf resume each other's sessions (golang/go#60506).
func ConfigureTLSConfig(conf *tls.Config) *tls.Config {
	conf.DecryptTicket(nil, tls.ConnectionState{}) // sets up the ticket keys
	c := conf.Clone()
	c.NextProtos = []string{NextProtoH3}
	if c.MinVersion < tls.VersionTLS13 {
		c.MinVersion = tls.VersionTLS13
	}
	if get := c.GetConfigForClient; get != nil {
		c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			cc, err := get(hello)
			if cc == nil || err != nil {
				return cc, err
			}
			return ConfigureTLSConfig(cc), nil
		}
	}
	return c
}

// ListenAndServeQUIC serves handler (http.DefaultServeMux when nil) over
// HTTP/3 on the UDP address addr, with the certificate and key in these
// PEM files.
func ListenAndServeQUIC(addr, certFile, keyFile string, handler http.Handler) error {
	return (&Server{Addr: addr, Handler: handler}).ListenAndServeTLS(certFile, keyFile)
}

// ListenAndServeTLS serves handler (http.DefaultServeMux when nil) on
// addr over both HTTP/3 (UDP) and HTTPS (HTTP/1.1 and HTTP/2 on TCP),
// with the certificate and key in these PEM files, as quic-go's does: the
// TCP server's responses announce HTTP/3 with Alt-Svc. It returns the
// first error of either, having closed the other.
func ListenAndServeTLS(addr, certFile, keyFile string, handler http.Handler) error {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("http3: load the certificate: %w", err)
	}
	if addr == "" {
		addr = ":https"
	}
	if handler == nil {
		handler = http.DefaultServeMux
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}}
	h3 := &Server{Addr: addr, TLSConfig: tlsConf, Handler: handler}
	ln, err := quicnet.ListenEarly("udp", addr, ConfigureTLSConfig(tlsConf), h3.quicConfig())
	if err != nil {
		return err
	}
	tcp := &http.Server{Addr: addr, TLSConfig: tlsConf.Clone(), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h3.SetQUICHeaders(w.Header())
		handler.ServeHTTP(w, r)
	})}
	errc := make(chan error, 2)
	go func() { errc <- fmt.Errorf("http3: HTTPS over TCP: %w", tcp.ListenAndServeTLS("", "")) }()
	go func() { errc <- h3.serve(ln, true) }()
	err = <-errc
	h3.Close()
	tcp.Close()
	<-errc
	return err
}

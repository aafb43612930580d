package interop

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
)

// Role is an implementation's role in a case.
type Role string

// Roles.
const (
	Server Role = "server"
	Client Role = "client"
)

// ALPNs of the runner's two application protocols.
const (
	HQ = "hq-interop" // HTTP/0.9: "GET /path\r\n", the file, FIN
	H3 = "h3"
)

// ServerConfig is what a server is started with.
type ServerConfig struct {
	// Addr is the address to listen on ("127.0.0.1:0", "[::1]:0").
	Addr string
	// Root holds the files to serve.
	Root string
	// Cert, with CertFile and KeyFile (PEM) for programs.
	Cert              tls.Certificate
	CertFile, KeyFile string
	ALPN              string
	// Retry asks for a Retry before every connection (address validation).
	Retry bool
	// Version2 offers QUIC version 2 too.
	Version2 bool
	// KeyLog gets the TLS secrets (NSS key log format); KeyLogFile is a
	// file for programs to write them to, read into KeyLog at the end.
	KeyLog     io.Writer
	KeyLogFile string
	// Output gets what the server prints.
	Output io.Writer
}

// ClientConfig is what a client run is given.
type ClientConfig struct {
	// Server is the address to connect to (the relay's).
	Server     *net.UDPAddr
	ServerName string
	Roots      *x509.CertPool
	CAFile     string
	// Paths to fetch ("/a"), into Download.
	Paths    []string
	Download string
	ALPN     string
	// Resumption: the first path in a first connection, the others in a
	// second that resumes the first's session; ZeroRTT: the second sends
	// its requests in 0-RTT.
	Resumption, ZeroRTT bool
	// MultiConnect: one connection per path, one after the other.
	MultiConnect bool
	// KeyUpdate: update the keys once the handshake is confirmed.
	KeyUpdate bool
	// ChaCha20: offer TLS_CHACHA20_POLY1305_SHA256 only.
	ChaCha20 bool
	// Version2: use QUIC version 2.
	Version2   bool
	KeyLog     io.Writer
	KeyLogFile string
	Output     io.Writer
}

// Impl is a QUIC implementation the runner can drive.
type Impl interface {
	Name() string
	// ALPNs are the application protocols it speaks (HQ, H3).
	ALPNs() []string
	// Supports returns nil, or why the implementation cannot play the
	// role in the case (it is then "unsupported", as the runner's 127).
	Supports(role Role, c *Case) error
	// Serve starts a server; stop ends it.
	Serve(ctx context.Context, cfg ServerConfig) (addr *net.UDPAddr, stop func() error, err error)
	// Fetch runs the client until every path is downloaded or ctx ends.
	Fetch(ctx context.Context, cfg ClientConfig) error
}

// ErrUnsupported is wrapped by Supports' answers.
var ErrUnsupported = errors.New("unsupported")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

var impls = map[string]func() (Impl, error){}

// RegisterImpl adds an implementation by name; open says whether it can run
// here (a program installed, a module loaded).
func RegisterImpl(name string, open func() (Impl, error)) { impls[name] = open }

// OpenImpl returns an implementation by name.
func OpenImpl(name string) (Impl, error) {
	open, ok := impls[name]
	if !ok {
		return nil, fmt.Errorf("interop: no implementation %q (there are: %s)", name, strings.Join(ImplNames(), ", "))
	}
	return open()
}

// ImplNames are the registered implementations, sorted.
func ImplNames() []string {
	var out []string
	for n := range impls {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

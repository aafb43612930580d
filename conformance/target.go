package conformance

import (
	"context"
	"crypto/tls"
	"fmt"
	"sort"
	"strings"
	"time"

	"kquic.dev/internal/selfsigned"
)

// ALPN is the protocol both ends of a conformance connection name.
const ALPN = "kq-conformance"

// Target is an implementation under test.
type Target interface {
	// Name is the implementation's name ("quic-go", "kquic").
	Name() string
	// Serve starts a server on a loopback address that accepts every
	// connection and reads every stream to its end, until ctx is done.
	Serve(ctx context.Context, cfg *tls.Config) (addr string, err error)
	// Connect dials addr as a client and reads every stream the server
	// opens until ctx is done or the connection ends; it returns once the
	// connection ends.
	Connect(ctx context.Context, addr string, cfg *tls.Config) error
}

var targets = map[string]func() (Target, error){}

// Register adds a target by name.
func Register(name string, open func() (Target, error)) { targets[name] = open }

// Open returns the target of that name, or an error naming the ones there
// are (and, from the target itself, why it cannot run here).
func Open(name string) (Target, error) {
	open, ok := targets[name]
	if !ok {
		return nil, fmt.Errorf("conformance: no target %q (there are: %s)", name, strings.Join(TargetNames(), ", "))
	}
	return open()
}

// TargetNames are the registered targets, sorted.
func TargetNames() []string {
	var out []string
	for n := range targets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TLSPair are the two ends' TLS settings for a run.
type TLSPair struct{ Server, Client *tls.Config }

// NewTLSPair makes a certificate for the run (the harness checks transport
// answers, not PKI) and a client that does not verify it, both for ALPN.
func NewTLSPair() (*TLSPair, error) {
	s, c, err := tlsConfigs()
	if err != nil {
		return nil, fmt.Errorf("conformance: certificate: %w", err)
	}
	return &TLSPair{Server: s, Client: c}, nil
}

func tlsConfigs() (server, client *tls.Config, err error) {
	cert, _, err := selfsigned.New(selfsigned.Options{Names: []string{"localhost"}, Valid: 24 * time.Hour})
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}, MinVersion: tls.VersionTLS13}
	// Two key shares keep the ClientHello in one Initial packet: a
	// predictable first flight for every target.
	client = &tls.Config{InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{ALPN}, MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}}
	return server, client, nil
}

//go:build linux

package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"kquic.dev/bench"
	"kquic.dev/bench/host"
	"kquic.dev/bench/results"
	"kquic.dev/bench/topo"
	"kquic.dev/bench/transport"
)

// HandshakeTimeout bounds the TLS handshake and hello of a control
// connection.
const HandshakeTimeout = 10 * time.Second

// IdleMargin is how much longer than the client's sample (its warmup and
// time, sent with every request) a session may stay silent between two
// requests before the server cuts it off: room for what the client does
// between samples. A client that does not say (an older kqbench) gets
// IdleMargin alone.
const IdleMargin = 2 * time.Minute

// Server is the peer end of two-host mode (`kqbench server`).
type Server struct {
	token string
	dev   *topo.Device
	log   *log.Logger
	cert  tls.Certificate
	fp    string
	bcert []byte // the benchmark transports' certificate
	env   results.Environment

	mu      sync.Mutex
	session string // the client being served, "" for none
	// sessionIdle is how long it may stay silent, for the busy message.
	sessionIdle time.Duration
	idle        time.Duration
	conns       map[net.Conn]bool
	wg          sync.WaitGroup
}

// SetIdleLimit makes d the longest a session may stay silent between two
// requests, whatever its samples' time (kqbench server --idle); 0, the
// default: the client's sample time plus IdleMargin. A session silent for
// longer is told why, ended, and the device restored, so a client that
// hangs does not keep the others out.
func (s *Server) SetIdleLimit(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = d
}

// idleLimit is how long a session whose client said its samples take
// sample may stay silent.
func (s *Server) idleLimit(sample time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idleLimitLocked(sample)
}

// idleLimitLocked is idleLimit with s.mu held.
func (s *Server) idleLimitLocked(sample time.Duration) time.Duration {
	if s.idle > 0 {
		return s.idle
	}
	return max(sample, 0) + IdleMargin
}

// idleRule says what the idle limit is, for the messages that name it.
func (s *Server) idleRule() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle > 0 {
		return fmt.Sprintf("%v (kqbench server --idle)", s.idle)
	}
	return fmt.Sprintf("the client's sample time plus %v", IdleMargin)
}

// NewServer makes a server that authenticates clients with token, applies
// each cell's MTU and offloads to dev and runs the benchmark's sockets in
// dev's network namespace, and logs connections and refusals to logw (nil:
// discarded). It makes the server's self-signed certificate; Fingerprint
// says which.
func NewServer(token string, dev *topo.Device, logw io.Writer) (*Server, error) {
	if token == "" {
		return nil, errors.New("kqbench server: no token: give a shared secret (--token or $KQBENCH_TOKEN), for example from `openssl rand -hex 16`")
	}
	if dev == nil {
		return nil, errors.New("kqbench server: no device: name the device the benchmark traffic uses (--dev)")
	}
	if logw == nil {
		logw = io.Discard
	}
	cert, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("kqbench server: certificate: %w", err)
	}
	bcert, err := transport.Certificate()
	if err != nil {
		return nil, fmt.Errorf("kqbench server: benchmark certificate: %w", err)
	}
	env := bench.RunEnvironment()
	env.Topology = "kqbench server on " + dev.Name()
	env.NICDriver = dev.Driver()
	nic := host.ReadNIC(dev)
	env.NIC = &nic
	return &Server{
		token: token, dev: dev, log: log.New(logw, "kqbench server: ", log.LstdFlags),
		cert: cert, fp: Fingerprint(cert.Certificate[0]), bcert: bcert, env: env,
		conns: map[net.Conn]bool{},
	}, nil
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "kqbench server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// FingerprintLine is how kqbench server prints its certificate's
// fingerprint once it listens (the fingerprint follows it on the line), for
// people to copy and programs to find.
const FingerprintLine = "certificate fingerprint (for the client's --fingerprint): "

// Fingerprint is the SHA-256 of the server's certificate, for clients'
// --fingerprint.
func (s *Server) Fingerprint() string { return s.fp }

// Serve accepts control connections on ln until it is closed. One client at
// a time runs benchmarks; others are told the server is busy.
func (s *Server) Serve(ln net.Listener) error {
	cfg := &tls.Config{Certificates: []tls.Certificate{s.cert}, MinVersion: tls.VersionTLS13}
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetKeepAlivePeriod(15 * time.Second)
			tc.SetKeepAlive(true)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(tls.Server(c, cfg))
		}()
	}
}

// Close ends every control connection and waits for their sessions to stop
// and restore the device. The listener is the caller's to close first.
func (s *Server) Close() error {
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) track(c net.Conn, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.conns[c] = true
	} else {
		delete(s.conns, c)
	}
}

func (s *Server) serveConn(c *tls.Conn) {
	s.track(c, true)
	defer s.track(c, false)
	defer c.Close()
	who := c.RemoteAddr().String()
	cd, mac, ok := s.login(c, who)
	if !ok {
		return
	}
	if !s.claim(cd, who) {
		return
	}
	// The session is released once, before the log says it ended, so a
	// client that reads "restored" in the log finds the server free.
	released := false
	release := func() {
		if !released {
			released = true
			s.mu.Lock()
			s.session, s.sessionIdle = "", 0
			s.mu.Unlock()
		}
	}
	defer release()

	local, _ := netip.ParseAddrPort(c.LocalAddr().String())
	laddr := local.Addr().Unmap()
	welcome := response{MAC: mac, Env: &s.env, Cert: s.bcert, Device: s.dev.Name()}
	if addrs, err := s.dev.Addrs(); err == nil && !slices.Contains(addrs, laddr) {
		welcome.Warning = fmt.Sprintf("the server's address %v is not on its device %s: the MTU and offloads it sets may not apply to the benchmark traffic", laddr, s.dev.Name())
		s.log.Print(welcome.Warning)
	}
	if err := cd.send(welcome); err != nil {
		return
	}
	s.log.Printf("session from %s: started", who)
	sess := &session{s: s, addr: laddr}
	err := sess.run(c, cd)
	sess.stop()
	rerr := s.dev.Restore()
	release()
	switch {
	case rerr != nil:
		s.log.Printf("session from %s: ended (%v); %v", who, err, rerr)
	default:
		s.log.Printf("session from %s: ended (%v); %s restored", who, err, s.dev.Name())
	}
}

// login runs the TLS handshake and hello of a control connection, within
// HandshakeTimeout: it answers a client that is refused with why, and
// returns the codec and the server's token MAC for the welcome of one that
// proved the token.
func (s *Server) login(c *tls.Conn, who string) (cd *codec, mac []byte, ok bool) {
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	if err := c.Handshake(); err != nil {
		s.log.Printf("refused %s: not a kqbench client (TLS handshake: %v)", who, err)
		return nil, nil, false
	}
	cd = newCodec(c)
	nonce := make([]byte, 32)
	rand.Read(nonce)
	bind, err := binding(c)
	if err != nil {
		s.log.Printf("refused %s: TLS exporter: %v", who, err)
		return nil, nil, false
	}
	if err := cd.send(greeting{Proto: protocol, Version: Version, Nonce: nonce}); err != nil {
		s.log.Printf("%s: %v", who, err)
		return nil, nil, false
	}
	var hello request
	if err := cd.recv(&hello); err != nil || hello.Op != opHello {
		if err == nil {
			err = fmt.Errorf("first message %q, not hello", hello.Op)
		}
		s.log.Printf("refused %s: not the kqbench control protocol (%v)", who, err)
		cd.send(response{Code: codeProto, Error: "not the kqbench control protocol: expected hello"})
		return nil, nil, false
	}
	if hello.Version != Version {
		s.log.Printf("refused %s: protocol version %d (this server speaks %d)", who, hello.Version, Version)
		cd.send(response{Code: codeVersion, Error: fmt.Sprintf("this kqbench server speaks control protocol version %d, the client %d: run the same kqbench version on both hosts", Version, hello.Version)})
		return nil, nil, false
	}
	if !hmac.Equal(hello.MAC, tokenMAC(s.token, "client", nonce, bind)) {
		s.log.Printf("refused %s: wrong token", who)
		cd.send(response{Code: codeToken, Error: "the server refused the token: give both ends the same --token"})
		return nil, nil, false
	}
	return cd, tokenMAC(s.token, "server", nonce, bind), true
}

// claim makes who the client being served, or tells it the server is busy
// with another (and how long that one may stay silent before it is cut
// off) and returns false.
func (s *Server) claim(cd *codec, who string) bool {
	s.mu.Lock()
	busy, idle := s.session, s.sessionIdle
	if busy == "" {
		// Its limit before it said its sample time (the session sets it
		// at each request): a client refused meanwhile is told this one.
		s.session, s.sessionIdle = who, s.idleLimitLocked(0)
	}
	s.mu.Unlock()
	if busy == "" {
		return true
	}
	s.log.Printf("refused %s: busy with %s", who, busy)
	cd.send(response{Code: codeBusy, Error: fmt.Sprintf("the kqbench server is busy with %s: wait for its run to end (a session silent for %v is cut off)", busy, idle.Round(time.Second))})
	return false
}

package quicnet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Impl names a QUIC implementation quicnet runs over.
type Impl string

// The implementations. A Linux build has both unless a build tag leaves
// one out: -tags kquic links kernel QUIC alone (no quic-go: Listen and
// Dial then need the module), -tags nokquic leaves kernel QUIC out. Other
// systems have quic-go alone.
const (
	// Auto lets each Listen and Dial choose: kernel QUIC where the kernel
	// opens an IPPROTO_QUIC socket (the QUIC module is loaded), quic-go
	// otherwise, unless $QUICNET_IMPLEMENTATION says which.
	Auto Impl = ""
	// Kernel is the Linux kernel's QUIC module, through kquic.dev/kquic.
	Kernel Impl = "kquic"
	// QuicGo is quic-go (userspace QUIC over UDP sockets).
	QuicGo Impl = "quic-go"
)

// ImplementationEnv names the environment variable by which an operator
// chooses the implementation of every Listen and Dial whose
// Config.Implementation is Auto, without rebuilding the program: "kquic"
// (or "kernel"), "quic-go", or "auto" (the same as unset). A value the
// program cannot use (quic-go in a -tags kquic build, kernel QUIC in a
// -tags nokquic one or off Linux) makes those Listens and Dials fail,
// naming the variable. A program that sets Config.Implementation has made
// its own choice, which the variable does not change.
const ImplementationEnv = "QUICNET_IMPLEMENTATION"

// String returns the implementation's name ("auto" for Auto).
func (i Impl) String() string {
	if i == Auto {
		return "auto"
	}
	return string(i)
}

// ParseImpl parses an implementation's name: "auto" (or ""), "kquic" (or
// "kernel"), "quic-go" (or "quicgo").
func ParseImpl(s string) (Impl, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "kquic", "kernel":
		return Kernel, nil
	case "quic-go", "quicgo":
		return QuicGo, nil
	}
	return Auto, fmt.Errorf("quicnet: unknown implementation %q: use auto, kquic (kernel QUIC) or quic-go", s)
}

// backend is one implementation, as a build links it in.
type backend struct {
	impl Impl
	// supported says why this implementation cannot run here (nil: it
	// can): kernel QUIC without the module.
	supported func() error
	// listen starts a listener; with early, Accept hands out connections
	// before their handshake completes where the implementation can.
	listen    func(network, addr string, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error)
	dial      func(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error)
	dialEarly func(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, data []byte) (*Conn, streamImpl, error)
	// convert turns the implementation's own errors into this package's
	// (ok false: err is none of them).
	convert func(err error) (converted error, ok bool)
}

// kernelBackend and quicGoBackend are set by the files of the
// implementations a build links (nil: left out).
var kernelBackend, quicGoBackend *backend

func backendOf(i Impl) *backend {
	switch i {
	case Kernel:
		return kernelBackend
	case QuicGo:
		return quicGoBackend
	}
	return nil
}

// notLinked says why implementation i is not in this build.
func notLinked(i Impl) error {
	switch i {
	case Kernel:
		return fmt.Errorf("quicnet: kernel QUIC is not built into this program (%s): %w", kernelLeftOut(), errors.ErrUnsupported)
	case QuicGo:
		return fmt.Errorf("quicnet: quic-go is not built into this program (built with -tags kquic, which links kernel QUIC alone; build without it for quic-go): %w", errors.ErrUnsupported)
	}
	return fmt.Errorf("quicnet: unknown implementation %q: use Auto, Kernel or QuicGo", string(i))
}

// Implementations lists the implementations built into this program:
// kquic then quic-go on Linux (one of them with -tags kquic or nokquic),
// quic-go elsewhere.
func Implementations() []Impl {
	var l []Impl
	for _, b := range []*backend{kernelBackend, quicGoBackend} {
		if b != nil {
			l = append(l, b.impl)
		}
	}
	return l
}

// Available says whether implementation i can run here: nil, or why not
// (it is not built in, or, for Kernel, the kernel opens no IPPROTO_QUIC
// socket: an error matching errors.ErrUnsupported). Available(Auto) says
// whether the implementation Auto chooses now can run.
func Available(i Impl) error {
	if i == Auto {
		b, _, err := choose(Auto)
		if err != nil {
			return err
		}
		i = b.impl
	}
	b := backendOf(i)
	if b == nil {
		return notLinked(i)
	}
	if b.supported != nil {
		return b.supported()
	}
	return nil
}

// Implementation returns the implementation Listen and Dial use with
// Config.Implementation Auto (a nil Config's): $QUICNET_IMPLEMENTATION's
// if set, else kernel QUIC where the kernel opens an IPPROTO_QUIC socket,
// else quic-go (a -tags kquic build: kernel QUIC, and Listen and Dial fail
// without the module). It looks again at each call, as Listen and Dial
// do, so a module loaded while the program runs is used from then on. An
// unusable $QUICNET_IMPLEMENTATION (one not built in) gives the
// implementation it names, and Listen and Dial fail saying why; one that
// names none is ignored here, and Listen and Dial fail on it.
func Implementation() Impl {
	if i, err := ParseImpl(os.Getenv(ImplementationEnv)); err == nil && i != Auto {
		return i
	}
	b, _ := chooseDefault()
	return b.impl
}

// choose resolves want into the backend a Listen or Dial uses, and, for
// Auto, why (for the log).
func choose(want Impl) (*backend, string, error) {
	if want != Auto {
		b := backendOf(want)
		if b == nil {
			return nil, "", notLinked(want)
		}
		return b, "", nil
	}
	if v := os.Getenv(ImplementationEnv); v != "" {
		i, err := ParseImpl(v)
		if err != nil {
			return nil, "", fmt.Errorf("$%s: %w", ImplementationEnv, err)
		}
		if i != Auto {
			b := backendOf(i)
			if b == nil {
				return nil, "", fmt.Errorf("$%s=%s: %w", ImplementationEnv, v, notLinked(i))
			}
			return b, fmt.Sprintf("$%s=%s", ImplementationEnv, v), nil
		}
	}
	b, why := chooseDefault()
	return b, why, nil
}

// chooseDefault is Auto's choice without $QUICNET_IMPLEMENTATION.
func chooseDefault() (*backend, string) {
	switch {
	case kernelBackend == nil:
		return quicGoBackend, "kernel QUIC is not built in (" + kernelLeftOut() + ")"
	case quicGoBackend == nil:
		return kernelBackend, "built with -tags kquic: kernel QUIC alone"
	}
	if err := kernelBackend.supported(); err != nil {
		return quicGoBackend, fmt.Sprintf("kernel QUIC is not available: %v", err)
	}
	return kernelBackend, "the kernel opens IPPROTO_QUIC sockets (the QUIC module is loaded)"
}

// kernelLeftOut says why a build has no kernel QUIC.
func kernelLeftOut() string {
	if runtime.GOOS != "linux" {
		return "kernel QUIC needs Linux, this is " + runtime.GOOS
	}
	return "built with -tags nokquic"
}

// chosen logs, once per implementation and reason kind, what Auto chose.
var chosen sync.Map

// resolve is choose for a Listen or Dial with conf, logging Auto's choice
// the first time it is made.
func resolve(conf *Config) (*backend, error) {
	b, why, err := choose(conf.Implementation)
	if err != nil {
		return nil, err
	}
	if why != "" {
		if _, seen := chosen.LoadOrStore(b.impl, true); !seen {
			slog.Info("quicnet: QUIC over "+b.impl.describe(), "implementation", string(b.impl), "why", why,
				"override", ImplementationEnv+"=kquic|quic-go, or Config.Implementation")
		}
	}
	return b, nil
}

func (i Impl) describe() string {
	switch i {
	case Kernel:
		return "kernel QUIC"
	case QuicGo:
		return "quic-go"
	}
	return i.String()
}

// Listener and connection implementations: one of each per backend.
type (
	listenerImpl interface {
		accept(ctx context.Context) (*Conn, error)
		close() error
		addr() net.Addr
	}
	connImpl interface {
		acceptStream(ctx context.Context) (streamImpl, error)
		acceptUniStream(ctx context.Context) (recvStreamImpl, error)
		openStream() (streamImpl, error)
		openStreamSync(ctx context.Context) (streamImpl, error)
		openUniStream() (sendStreamImpl, error)
		openUniStreamSync(ctx context.Context) (sendStreamImpl, error)
		sendDatagram(b []byte) error
		receiveDatagram(ctx context.Context) ([]byte, error)
		closeWithError(code ApplicationErrorCode, reason string) error
		tlsState() tls.ConnectionState
		used0RTT() bool
		localAddr() net.Addr
		remoteAddr() net.Addr
		done() <-chan struct{}
		closeError() error
		afterClose(f func())
		handshakeComplete() <-chan struct{}
	}
	streamImpl interface {
		streamID() StreamID
		read(p []byte) (int, error)
		write(p []byte) (int, error)
		close() error
		writeAndClose(p []byte) (int, error)
		cancelRead(code StreamErrorCode) error
		cancelWrite(code StreamErrorCode) error
		setReadDeadline(t time.Time) error
		setWriteDeadline(t time.Time) error
	}
	recvStreamImpl interface {
		streamID() StreamID
		read(p []byte) (int, error)
		cancelRead(code StreamErrorCode) error
		setReadDeadline(t time.Time) error
	}
	sendStreamImpl interface {
		streamID() StreamID
		write(p []byte) (int, error)
		close() error
		cancelWrite(code StreamErrorCode) error
		setWriteDeadline(t time.Time) error
	}
)

// convertError turns an implementation's errors into this package's.
func convertError(err error) error {
	if err == nil || isConverted(err) {
		return err
	}
	for _, b := range []*backend{kernelBackend, quicGoBackend} {
		if b == nil {
			continue
		}
		if c, ok := b.convert(err); ok {
			return c
		}
	}
	return err
}

// closedChan is a closed channel: the handshake of a connection handed out
// complete.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

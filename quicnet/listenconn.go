package quicnet

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
)

// ListenConn listens for QUIC connections on conn, a socket the caller
// opened (quic-go's quic.Listen): the caller may share it with other
// work, as quic-go allows, and closing the listener leaves it open (closing
// it is the caller's business, once the listener and the connections it
// accepted are done). Accept, Close and Addr behave as [Listen]'s.
//
// Only quic-go can serve on a net.PacketConn, so the listener runs on
// quic-go whatever Auto would choose. Kernel QUIC opens its own UDP socket
// in the kernel and takes its address instead: where kernel QUIC is asked
// for (conf.Implementation [Kernel], or $QUICNET_IMPLEMENTATION with Auto)
// or is all the program has (-tags kquic), ListenConn returns
// [ErrPacketConn], and [Listen] is what to use.
func ListenConn(conn net.PacketConn, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	impl, err := listenConn(conn, tlsConf, conf, false)
	if err != nil {
		return nil, err
	}
	return &Listener{impl: impl, kind: QuicGo}, nil
}

// ListenEarlyConn is [ListenConn] for an [EarlyListener], as quic-go's
// quic.ListenEarly.
func ListenEarlyConn(conn net.PacketConn, tlsConf *tls.Config, conf *Config) (*EarlyListener, error) {
	impl, err := listenConn(conn, tlsConf, conf, true)
	if err != nil {
		return nil, err
	}
	return &EarlyListener{impl: impl, kind: QuicGo}, nil
}

// goListenConn is quic-go's listener on a caller's socket, set where the
// build links quic-go.
var goListenConn func(conn net.PacketConn, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error)

func listenConn(conn net.PacketConn, tlsConf *tls.Config, conf *Config, early bool) (listenerImpl, error) {
	if conn == nil {
		return nil, errors.New("quicnet: ListenConn: conn is nil")
	}
	if tlsConf == nil {
		return nil, errors.New("quicnet: listen: a tls.Config with a certificate is required")
	}
	conf = conf.orZero()
	want := conf.Implementation
	if want == Auto {
		want, _ = ParseImpl(os.Getenv(ImplementationEnv))
	}
	if want == Kernel || goListenConn == nil {
		return nil, ErrPacketConn
	}
	return goListenConn(conn, tlsConf, conf, early)
}

// ErrPacketConn is [ListenConn]'s error where kernel QUIC is asked for or
// is all the program has: it cannot take a net.PacketConn. It matches
// errors.ErrUnsupported.
var ErrPacketConn error = packetConnError{}

type packetConnError struct{}

func (packetConnError) Error() string {
	return "quicnet: kernel QUIC opens its own socket and cannot serve on a net.PacketConn: listen with quicnet.Listen(network, address, ...) instead"
}
func (packetConnError) Unwrap() error { return errors.ErrUnsupported }

//go:build linux

package ktls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// Client runs a TLS client handshake on conn, which must be a *net.TCPConn,
// then hands the record layer to the kernel. On error conn is closed.
func Client(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	return handshake(ctx, conn, config, true)
}

// Server runs a TLS server handshake on conn, which must be a *net.TCPConn,
// then hands the record layer to the kernel. On error conn is closed.
func Server(ctx context.Context, conn net.Conn, config *Config) (*Conn, error) {
	return handshake(ctx, conn, config, false)
}

// Dial connects to address over TCP and runs Client on the connection. If
// config.TLS.ServerName is empty it is set from address.
func Dial(ctx context.Context, network, address string, config *Config) (*Conn, error) {
	if config == nil || config.TLS == nil {
		return nil, errors.New("ktls: Dial: Config.TLS is nil; pass a *tls.Config")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("ktls: dial %s: %w", address, err)
	}
	if config.TLS.ServerName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		c := *config
		c.TLS = config.TLS.Clone()
		c.TLS.ServerName = host
		config = &c
	}
	return Client(ctx, nc, config)
}

func handshake(ctx context.Context, conn net.Conn, config *Config, isClient bool) (*Conn, error) {
	role := map[bool]string{true: "client", false: "server"}[isClient]
	tcp, ok := conn.(*net.TCPConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("ktls: %s handshake: the connection is a %T; kernel TLS needs a *net.TCPConn", role, conn)
	}
	if config == nil || config.TLS == nil {
		conn.Close()
		return nil, fmt.Errorf("ktls: %s handshake: Config.TLS is nil; pass a *tls.Config", role)
	}
	hc, err := runHandshake(ctx, tcp, config, isClient)
	if err != nil {
		tcp.Close()
		return nil, err
	}
	defer hc.log.wipe()

	c := newConn(tcp, hc, config)
	keys, err := hc.sessionKeys()
	if err == nil {
		err = c.attach(keys, config)
	}
	if err == nil {
		return c, nil
	}
	var ke *KernelError
	if config.Fallback && (!errors.As(err, &ke) || !c.kernelTouched) {
		c.useFallback(err)
		return c, nil
	}
	tcp.Close()
	return nil, err
}

// handshakeResult is what the handshake leaves behind for the switch.
type handshakeResult struct {
	tls      *tls.Conn
	rc       *recordConn
	log      *keyLog
	isClient bool
	state    tls.ConnectionState
}

func runHandshake(ctx context.Context, tcp *net.TCPConn, config *Config, isClient bool) (*handshakeResult, error) {
	log := &keyLog{user: config.TLS.KeyLogWriter}
	tcfg := config.TLS.Clone()
	tcfg.KeyLogWriter = log
	if get := tcfg.GetConfigForClient; get != nil {
		tcfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c, err := get(hello)
			if c == nil || err != nil {
				return c, err
			}
			c = c.Clone()
			log.user = c.KeyLogWriter
			c.KeyLogWriter = log
			return c, nil
		}
	}
	rc := newRecordConn(tcp, isClient)
	var tc *tls.Conn
	if isClient {
		tc = tls.Client(rc, tcfg)
	} else {
		tc = tls.Server(rc, tcfg)
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		role := map[bool]string{true: "client", false: "server"}[isClient]
		return nil, fmt.Errorf("ktls: TLS %s handshake with %s failed: %w", role, tcp.RemoteAddr(), err)
	}
	return &handshakeResult{tls: tc, rc: rc, log: log, isClient: isClient, state: tc.ConnectionState()}, nil
}

// sessionKeys is everything the kernel needs for both directions.
type sessionKeys struct {
	suite              *suite
	version            uint16
	tx, rx             *cryptoInfo
	txSecret, rxSecret []byte // TLS 1.3 traffic secrets, for KeyUpdate
}

func (k *sessionKeys) wipe() {
	k.tx.wipe()
	k.rx.wipe()
}

// sessionKeys derives the keys and reads the sequence numbers at the end of
// the handshake.
func (h *handshakeResult) sessionKeys() (*sessionKeys, error) {
	st := h.state
	s, err := lookupSuite(st.Version, st.CipherSuite)
	if err != nil {
		return nil, err
	}
	if !h.rc.atBoundary() {
		return nil, errors.New("ktls: internal error: the handshake ended inside a TLS record")
	}
	if n, err := tlsBuffered(h.tls); err != nil {
		return nil, err
	} else if n != 0 {
		return nil, fmt.Errorf("ktls: internal error: crypto/tls holds %d bytes read past the handshake", n)
	}
	inSeq, outSeq, err := tlsSeqs(h.tls)
	if err != nil {
		return nil, err
	}
	k := &sessionKeys{suite: s, version: st.Version}
	if s.tls13 {
		cs, err := h.log.get("CLIENT_TRAFFIC_SECRET_0")
		if err != nil {
			return nil, err
		}
		ss, err := h.log.get("SERVER_TRAFFIC_SECRET_0")
		if err != nil {
			return nil, err
		}
		cs, ss = append([]byte(nil), cs...), append([]byte(nil), ss...)
		k.txSecret, k.rxSecret = cs, ss
		if !h.isClient {
			k.txSecret, k.rxSecret = ss, cs
		}
		txKey, txIV := tls13TrafficKeys(s, k.txSecret)
		rxKey, rxIV := tls13TrafficKeys(s, k.rxSecret)
		k.tx = directionInfo(s, txKey, txIV, outSeq)
		k.rx = directionInfo(s, rxKey, rxIV, inSeq)
		return k, nil
	}
	ms, err := h.log.get("CLIENT_RANDOM")
	if err != nil {
		return nil, err
	}
	sr := h.rc.serverRandom()
	if sr == nil {
		return nil, errors.New("ktls: internal error: the ServerHello random was not seen")
	}
	cr, err := h.clientRandom()
	if err != nil {
		return nil, err
	}
	ckey, skey, civ, siv := tls12KeyBlock(s, ms, cr, sr)
	if h.isClient {
		k.tx, k.rx = directionInfo(s, ckey, civ, outSeq), directionInfo(s, skey, siv, inSeq)
	} else {
		k.tx, k.rx = directionInfo(s, skey, siv, outSeq), directionInfo(s, ckey, civ, inSeq)
	}
	return k, nil
}

// clientRandom is the client random, the second field of the CLIENT_RANDOM
// key log line.
func (h *handshakeResult) clientRandom() ([]byte, error) {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	if h.log.clientRandom == nil {
		return nil, errors.New("ktls: crypto/tls did not log the client random")
	}
	return h.log.clientRandom, nil
}

//go:build linux

package ktls

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// holdConn holds back every write after the first n until release, then
// sends them in one write: the peer's Finished and its first application
// data arrive in the same TCP segment.
type holdConn struct {
	net.Conn
	mu      sync.Mutex
	n       int
	writes  int
	held    []byte
	release func() error
}

func newHoldConn(c net.Conn, n int) *holdConn {
	h := &holdConn{Conn: c, n: n}
	h.release = func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		b := h.held
		h.held, h.n = nil, 1<<30
		_, err := h.Conn.Write(b)
		return err
	}
	return h
}

func (h *holdConn) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes++
	if h.writes > h.n {
		h.held = append(h.held, p...)
		return len(p), nil
	}
	return h.Conn.Write(p)
}

// TestSwitchKeysInSoftware runs the switch against crypto/tls peers on the
// host and then does in Go exactly what the kernel would do with the crypto
// info: decrypt what the peer sends after the handshake (tickets, data,
// KeyUpdate) and encrypt what the peer must accept. Keys, IVs, sequence
// numbers, the "traffic upd" rekey and the no-byte-lost guarantee are all
// checked without kernel TLS.
func TestSwitchKeysInSoftware(t *testing.T) {
	cases := append([]suiteCase{{"TLS13", tls.VersionTLS13, 0}}, tls12Suites...)
	for _, sc := range cases {
		for _, isClient := range []bool{true, false} {
			for _, same := range []bool{false, true} {
				name := fmt.Sprintf("%s/client=%v/sameSegment=%v", sc.name, isClient, same)
				// The peer can put data behind its Finished only when its
				// Finished is the last handshake flight: a TLS 1.3 client
				// or a TLS 1.2 server.
				if same && (sc.version == tls.VersionTLS13) == isClient {
					continue
				}
				t.Run(name, func(t *testing.T) { softSwitch(t, sc, isClient, same) })
			}
		}
	}
}

func softSwitch(t *testing.T, sc suiteCase, isClient, sameSegment bool) {
	c, s := tcpPair(t)
	ours, peerNC := c, net.Conn(s)
	if !isClient {
		ours, peerNC = s, c
	}
	var hold *holdConn
	if sameSegment {
		hold = newHoldConn(peerNC, 1)
		peerNC = hold
	}
	tls13 := sc.version == tls.VersionTLS13
	msg := func(who string, i int) []byte { return []byte(fmt.Sprintf("%s message %d", who, i)) }

	peerErr := make(chan error, 1)
	go func() {
		peerErr <- func() error {
			var p *tls.Conn
			if isClient {
				p = tls.Server(peerNC, serverConfig(t, sc.version, sc.suites()...))
			} else {
				cfg := clientConfig(t, sc.version, sc.suites()...)
				cfg.ClientSessionCache = tls.NewLRUClientSessionCache(1)
				p = tls.Client(peerNC, cfg)
			}
			if err := p.Handshake(); err != nil {
				return err
			}
			if _, err := p.Write(msg("peer", 1)); err != nil {
				return err
			}
			if hold != nil {
				if err := hold.release(); err != nil {
					return err
				}
			}
			for i := 1; i <= 2; i++ {
				if i == 2 && !tls13 {
					break
				}
				want := msg("ktls", i)
				got := make([]byte, len(want))
				if _, err := io.ReadFull(p, got); err != nil {
					return fmt.Errorf("peer reading ktls message %d: %w", i, err)
				}
				if !bytes.Equal(got, want) {
					return fmt.Errorf("peer read %q, want %q", got, want)
				}
			}
			if tls13 {
				// crypto/tls answered our KeyUpdate with its own: this
				// record is under its next key.
				if _, err := p.Write(msg("peer", 2)); err != nil {
					return err
				}
			}
			return nil
		}()
	}()

	cfg := &Config{TLS: clientConfig(t, sc.version, sc.suites()...)}
	cfg.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	if !isClient {
		cfg.TLS = serverConfig(t, sc.version, sc.suites()...)
	}
	h, err := runHandshake(testCtx(t), ours, cfg, isClient)
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.sessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	if !isClient && tls13 && k.tx.recSeq == 0 {
		t.Errorf("TLS 1.3 server send seq is 0; crypto/tls sent a NewSessionTicket under the application key")
	}
	rx, tx := newSoftRecord(t, k.rx), newSoftRecord(t, k.tx)

	// What the peer sent after the handshake, tickets first.
	tickets := 0
	for {
		typ, pt, err := rx.open(ours)
		if err != nil {
			t.Fatalf("decrypting the peer's first record after the switch: %v", err)
		}
		if typ == recordHandshake && pt[0] == hsNewSessionTicket {
			tickets++
			continue
		}
		if typ != recordApplicationData || !bytes.Equal(pt, msg("peer", 1)) {
			t.Fatalf("record type %d %q, want application data %q", typ, pt, msg("peer", 1))
		}
		break
	}
	if isClient && tls13 && tickets == 0 {
		t.Error("no NewSessionTicket reached the kernel side")
	}
	if _, err := ours.Write(tx.seal(recordApplicationData, msg("ktls", 1))); err != nil {
		t.Fatal(err)
	}
	if tls13 {
		// KeyUpdate(update_requested), then our next key.
		if _, err := ours.Write(tx.seal(recordHandshake, []byte{hsKeyUpdate, 0, 0, 1, 1})); err != nil {
			t.Fatal(err)
		}
		next := nextTrafficSecret(k.suite, k.txSecret)
		key, iv := tls13TrafficKeys(k.suite, next)
		tx = newSoftRecord(t, directionInfo(k.suite, key, iv, 0))
		if _, err := ours.Write(tx.seal(recordApplicationData, msg("ktls", 2))); err != nil {
			t.Fatal(err)
		}
		typ, pt, err := rx.open(ours)
		if err != nil || typ != recordHandshake || !bytes.Equal(pt, []byte{hsKeyUpdate, 0, 0, 1, 0}) {
			t.Fatalf("want the peer's KeyUpdate(update_not_requested), got type %d % x, %v", typ, pt, err)
		}
		next = nextTrafficSecret(k.suite, k.rxSecret)
		key, iv = tls13TrafficKeys(k.suite, next)
		rx = newSoftRecord(t, directionInfo(k.suite, key, iv, 0))
		typ, pt, err = rx.open(ours)
		if err != nil || typ != recordApplicationData || !bytes.Equal(pt, msg("peer", 2)) {
			t.Fatalf("after the peer's KeyUpdate: type %d %q, %v", typ, pt, err)
		}
	}
	if err := <-peerErr; err != nil {
		t.Fatalf("peer: %v", err)
	}
}

//go:build linux

package ktls

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"net"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 8448 section 3 (Simple 1-RTT Handshake), TLS_AES_128_GCM_SHA256: the
// application traffic secrets and the write keys and IVs derived from them.
func TestTLS13KeysRFC8448(t *testing.T) {
	s := suites[tls.TLS_AES_128_GCM_SHA256]
	for _, v := range []struct{ name, secret, key, iv string }{
		{"server", "a1 1a f9 f0 55 31 f8 56 ad 47 11 6b 45 a9 50 32 82 04 b4 f4 4b fb 6b 3a 4b 4f 1f 3f cb 63 16 43",
			"9f 02 28 3b 6c 9c 07 ef c2 6b b9 f2 ac 92 e3 56", "cf 78 2b 88 dd 83 54 9a ad f1 e9 84"},
		{"client", "9e 40 64 6c e7 9a 7f 9d c0 5a f8 88 9b ce 65 52 87 5a fa 0b 06 df 00 87 f7 92 eb b7 c1 75 04 a5",
			"17 42 2d da 59 6e d5 d9 ac d8 90 e3 c6 3f 50 51", "5b 78 92 3d ee 08 57 90 33 e5 23 d9"},
	} {
		key, iv := tls13TrafficKeys(s, unhex(t, v.secret))
		if !bytes.Equal(key, unhex(t, v.key)) || !bytes.Equal(iv, unhex(t, v.iv)) {
			t.Errorf("%s: key %x iv %x, want %s / %s", v.name, key, iv, v.key, v.iv)
		}
		ci := directionInfo(s, key, iv, 7)
		if !bytes.Equal(ci.salt, iv[:4]) || !bytes.Equal(ci.iv, iv[4:]) || ci.recSeq != 7 || ci.version != kernelTLS13Version {
			t.Errorf("%s: crypto info %+v", v.name, ci)
		}
	}
}

// TestTLS12PRF checks the PRF, the client random from the key log and the
// server random from the ServerHello tap against crypto/tls's own exporter
// (RFC 5705: PRF(master, label, client_random + server_random)).
func TestTLS12PRF(t *testing.T) {
	for _, sc := range tls12Suites {
		t.Run(sc.name, func(t *testing.T) {
			for _, isClient := range []bool{true, false} {
				c, s := tcpPair(t)
				ours, peer := net.Conn(c), net.Conn(s)
				if !isClient {
					ours, peer = s, c
				}
				done := make(chan error, 1)
				var peerTLS *tls.Conn
				go func() {
					if isClient {
						peerTLS = tls.Server(peer, serverConfig(t, sc.version, sc.suites()...))
					} else {
						peerTLS = tls.Client(peer, clientConfig(t, sc.version, sc.suites()...))
					}
					done <- peerTLS.Handshake()
				}()
				cfg := &Config{TLS: clientConfig(t, sc.version, sc.suites()...)}
				if !isClient {
					cfg.TLS = serverConfig(t, sc.version, sc.suites()...)
				}
				h, err := runHandshake(testCtx(t), ours.(*net.TCPConn), cfg, isClient)
				if err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				ms, _ := h.log.get("CLIENT_RANDOM")
				cr, _ := h.clientRandom()
				sr := h.rc.serverRandom()
				if len(sr) != 32 || len(cr) != 32 {
					t.Fatalf("randoms: client %x server %x", cr, sr)
				}
				st := h.state
				su := suites[st.CipherSuite]
				got := prf12(su.hash, ms, "EXPORTER-ktls", append(append([]byte{}, cr...), sr...), 40)
				pst := peerTLS.ConnectionState()
				want, err := pst.ExportKeyingMaterial("EXPORTER-ktls", nil, 40)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("client=%v: PRF %x, crypto/tls exporter %x", isClient, got, want)
				}
			}
		})
	}
}

func TestKeyLogTee(t *testing.T) {
	var user bytes.Buffer
	k := &keyLog{user: &user}
	line := "CLIENT_TRAFFIC_SECRET_0 " + strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 32) + "\n"
	k.Write([]byte(line[:10]))
	k.Write([]byte(line[10:]))
	if user.String() != line {
		t.Errorf("user writer got %q", user.String())
	}
	s, err := k.get("CLIENT_TRAFFIC_SECRET_0")
	if err != nil || !bytes.Equal(s, bytes.Repeat([]byte{0xcd}, 32)) {
		t.Errorf("secret %x, %v", s, err)
	}
	if _, err := k.get("SERVER_TRAFFIC_SECRET_0"); err == nil {
		t.Error("missing secret not reported")
	}
}

//go:build linux

package quicabi

import (
	"crypto/tls"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"IPPROTO_QUIC", IPPROTO_QUIC, 261},
		{"SOL_QUIC", SOL_QUIC, 288},
		{"QUIC_STREAM_INFO", QUIC_STREAM_INFO, 0},
		{"QUIC_HANDSHAKE_INFO", QUIC_HANDSHAKE_INFO, 1},
		// notes §1.3: the Linux values of the aliased MSG_* bits
		{"MSG_QUIC_STREAM_NEW", MSG_QUIC_STREAM_NEW, 0x400},
		{"MSG_QUIC_STREAM_FIN", MSG_QUIC_STREAM_FIN, 0x200},
		{"MSG_QUIC_STREAM_UNI", MSG_QUIC_STREAM_UNI, 0x800},
		{"MSG_QUIC_STREAM_DONTWAIT", MSG_QUIC_STREAM_DONTWAIT, 0x10000},
		{"MSG_QUIC_STREAM_SNDBLOCK", MSG_QUIC_STREAM_SNDBLOCK, 0x2000},
		{"MSG_QUIC_DATAGRAM", MSG_QUIC_DATAGRAM, 0x1000},
		{"MSG_QUIC_NOTIFICATION", MSG_QUIC_NOTIFICATION, 0x8000},
		{"QUIC_SOCKOPT_EVENT", QUIC_SOCKOPT_EVENT, 0},
		{"QUIC_SOCKOPT_CRYPTO_SECRET", QUIC_SOCKOPT_CRYPTO_SECRET, 13},
		{"QUIC_SOCKOPT_TRANSPORT_PARAM_EXT", QUIC_SOCKOPT_TRANSPORT_PARAM_EXT, 14},
		{"QUIC_VERSION_V1", QUIC_VERSION_V1, 1},
		{"QUIC_VERSION_V2", QUIC_VERSION_V2, 0x6b3343cf},
		{"QUIC_CRYPTO_SECRET_BUFFER_SIZE", QUIC_CRYPTO_SECRET_BUFFER_SIZE, 48},
		{"QUIC_CLOSE_PHRASE_BUFFER_SIZE", QUIC_CLOSE_PHRASE_BUFFER_SIZE, 64},
		{"QUIC_EVENT_NEW_SESSION_TICKET", int64(QUIC_EVENT_NEW_SESSION_TICKET), 9},
		{"QUIC_STREAM_RECV_STATE_RESET_READ", int64(QUIC_STREAM_RECV_STATE_RESET_READ), 11},
		{"QUIC_TRANSPORT_ERROR_CRYPTO", QUIC_TRANSPORT_ERROR_CRYPTO, 0x100},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	// The stream flags must not collide with the flags the kernel accepts
	// alongside them in sendmsg.
	stream := MSG_QUIC_STREAM_NEW | MSG_QUIC_STREAM_FIN | MSG_QUIC_STREAM_UNI | MSG_QUIC_STREAM_DONTWAIT | MSG_QUIC_STREAM_SNDBLOCK
	for _, f := range []int{unix.MSG_BATCH, unix.MSG_MORE, unix.MSG_DONTWAIT, unix.MSG_NOSIGNAL, unix.MSG_WAITALL, MSG_QUIC_DATAGRAM} {
		if stream&f != 0 {
			t.Errorf("flag %#x overlaps the stream flags %#x", f, stream)
		}
	}
}

func TestCryptoLevelMapping(t *testing.T) {
	table := []struct {
		k   CryptoLevel
		tls tls.QUICEncryptionLevel
	}{ // notes §1.5
		{QUIC_CRYPTO_APP, tls.QUICEncryptionLevelApplication},
		{QUIC_CRYPTO_INITIAL, tls.QUICEncryptionLevelInitial},
		{QUIC_CRYPTO_HANDSHAKE, tls.QUICEncryptionLevelHandshake},
		{QUIC_CRYPTO_EARLY, tls.QUICEncryptionLevelEarly},
	}
	want := []uint8{0, 1, 2, 3}
	for i, e := range table {
		if uint8(e.k) != want[i] {
			t.Errorf("%v = %d, want %d", e.k, uint8(e.k), want[i])
		}
		k, err := CryptoLevelFromTLS(e.tls)
		if err != nil || k != e.k {
			t.Errorf("CryptoLevelFromTLS(%v) = %v, %v; want %v", e.tls, k, err, e.k)
		}
		l, err := e.k.TLSLevel()
		if err != nil || l != e.tls {
			t.Errorf("%v.TLSLevel() = %v, %v; want %v", e.k, l, err, e.tls)
		}
	}
	if _, err := QUIC_CRYPTO_MAX.TLSLevel(); err == nil {
		t.Error("QUIC_CRYPTO_MAX.TLSLevel() succeeded")
	}
	if _, err := CryptoLevelFromTLS(tls.QUICEncryptionLevel(17)); err == nil {
		t.Error("CryptoLevelFromTLS(17) succeeded")
	}
	if s := QUIC_CRYPTO_HANDSHAKE.String(); s != "HANDSHAKE" {
		t.Errorf("String() = %q", s)
	}
	if s := CryptoLevel(9).String(); s != "CryptoLevel(9)" {
		t.Errorf("String() = %q", s)
	}
}

func TestCipherMapping(t *testing.T) {
	table := []struct {
		suite uint16
		c     CipherType
		val   uint32
		n     int
	}{ // notes §1.6 and §2.5
		{0x1301, TLS_CIPHER_AES_GCM_128, 51, 32},
		{0x1302, TLS_CIPHER_AES_GCM_256, 52, 48},
		{0x1303, TLS_CIPHER_CHACHA20_POLY1305, 54, 32},
		{0x1304, TLS_CIPHER_AES_CCM_128, 53, 32},
	}
	for _, e := range table {
		if uint32(e.c) != e.val {
			t.Errorf("%v = %d, want %d", e.c, uint32(e.c), e.val)
		}
		c, err := CipherFromTLSSuite(e.suite)
		if err != nil || c != e.c {
			t.Errorf("CipherFromTLSSuite(%#x) = %v, %v; want %v", e.suite, c, err, e.c)
		}
		s, err := e.c.TLSSuite()
		if err != nil || s != e.suite {
			t.Errorf("%v.TLSSuite() = %#x, %v; want %#x", e.c, s, err, e.suite)
		}
		if n := e.c.SecretLen(); n != e.n {
			t.Errorf("%v.SecretLen() = %d, want %d", e.c, n, e.n)
		}
	}
	// Every TLS 1.3 suite crypto/tls can negotiate must map.
	for _, cs := range tls.CipherSuites() {
		for _, v := range cs.SupportedVersions {
			if v == tls.VersionTLS13 {
				if _, err := CipherFromTLSSuite(cs.ID); err != nil {
					t.Errorf("crypto/tls suite %s: %v", cs.Name, err)
				}
			}
		}
	}
	for _, s := range []uint16{0, 0x1305, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256} {
		if _, err := CipherFromTLSSuite(s); err == nil {
			t.Errorf("CipherFromTLSSuite(%#x) succeeded", s)
		}
	}
	for _, c := range []CipherType{0, 50, 55} {
		if _, err := c.TLSSuite(); err == nil || c.SecretLen() != 0 {
			t.Errorf("cipher %d: TLSSuite error %v, SecretLen %d", uint32(c), err, c.SecretLen())
		}
	}
}

func TestTransportErrorName(t *testing.T) {
	for _, c := range []struct {
		code uint64
		want string
	}{
		{0x00, "NO_ERROR"},
		{0x01, "INTERNAL_ERROR"},
		{0x08, "TRANSPORT_PARAMETER_ERROR"},
		{0x0a, "PROTOCOL_VIOLATION"},
		{0x0c, "APPLICATION_ERROR"},
		{0x10, "NO_VIABLE_PATH"},
		{0x11, "VERSION_NEGOTIATION_ERROR"},
		{0x12, "0x12"},
		{0xff, "0xff"},
		{0x100, "CRYPTO_ERROR(alert 0: close notify)"},
		{0x128, "CRYPTO_ERROR(alert 40: handshake failure)"},
		{0x178, "CRYPTO_ERROR(alert 120: no application protocol)"},
		{0x1ff, "CRYPTO_ERROR(alert 255)"},
		{0x200, "0x200"},
		{0xffffffff, "0xffffffff"},
	} {
		if got := TransportErrorName(c.code); got != c.want {
			t.Errorf("TransportErrorName(%#x) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{QUIC_EVENT_STREAM_UPDATE.String(), "STREAM_UPDATE"},
		{QUIC_EVENT_NEW_SESSION_TICKET.String(), "NEW_SESSION_TICKET"},
		{QUIC_EVENT_MAX.String(), "EventType(10)"},
		{QUIC_STREAM_SEND_STATE_READY.String(), "SEND_STATE_READY"},
		{QUIC_STREAM_RECV_STATE_RESET_READ.String(), "RECV_STATE_RESET_READ"},
		{StreamState(12).String(), "StreamState(12)"},
		{QUIC_CONG_ALG_CUBIC.String(), "CUBIC"},
		{QUIC_CONG_ALG_MAX.String(), "CongAlgo(2)"},
		{TLS_CIPHER_AES_CCM_128.String(), "AES_CCM_128"},
		{CipherType(57).String(), "CipherType(57)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

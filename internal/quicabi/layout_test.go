//go:build linux

package quicabi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// fieldAt is one member of a kernel struct as laid out on x86-64 (notes
// §1.8), with the Go field that holds it and a test value.
type fieldAt struct {
	cname  string // C member name
	off    int    // byte offset
	size   int    // total size in bytes (element size × count for arrays)
	goName string // Go field name; "" for reserved bytes
	val    uint64 // test value for integer and bool fields
	raw    []byte // test value for array and string fields
}

// layoutCase pins one struct: its size, and every member's offset and size.
type layoutCase struct {
	cname  string
	size   int
	zero   any // zero value of the Go type
	fields []fieldAt
	decode func([]byte) (any, error)
}

func seq(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

var layouts = []layoutCase{
	{"quic_transport_param", SizeofTransportParam, TransportParam{}, []fieldAt{
		{"remote", 0, 1, "Remote", 1, nil},
		{"disable_active_migration", 1, 1, "DisableActiveMigration", 1, nil},
		{"grease_quic_bit", 2, 1, "GreaseQUICBit", 1, nil},
		{"stateless_reset", 3, 1, "StatelessReset", 1, nil},
		{"disable_1rtt_encryption", 4, 1, "Disable1RTTEncryption", 1, nil},
		{"disable_compatible_version", 5, 1, "DisableCompatibleVersion", 1, nil},
		{"active_connection_id_limit", 6, 1, "ActiveConnectionIDLimit", 0x07, nil},
		{"ack_delay_exponent", 7, 1, "AckDelayExponent", 0x14, nil},
		{"max_datagram_frame_size", 8, 2, "MaxDatagramFrameSize", 0x0578, nil},
		{"max_udp_payload_size", 10, 2, "MaxUDPPayloadSize", 0xfff7, nil},
		{"max_idle_timeout", 12, 4, "MaxIdleTimeout", 0x01c9c380, nil},
		{"max_ack_delay", 16, 4, "MaxAckDelay", 0x000061a8, nil},
		{"max_streams_bidi", 20, 2, "MaxStreamsBidi", 0x0064, nil},
		{"max_streams_uni", 22, 2, "MaxStreamsUni", 0x1000, nil},
		{"max_data", 24, 8, "MaxData", 0x1111111111111111, nil},
		{"max_stream_data_bidi_local", 32, 8, "MaxStreamDataBidiLocal", 0x2222222222222222, nil},
		{"max_stream_data_bidi_remote", 40, 8, "MaxStreamDataBidiRemote", 0x3333333333333333, nil},
		{"max_stream_data_uni", 48, 8, "MaxStreamDataUni", 0x4444444444444444, nil},
	}, func(b []byte) (any, error) { return UnmarshalTransportParam(b) }},

	{"quic_config", SizeofConfig, Config{}, []fieldAt{
		{"version", 0, 4, "Version", QUIC_VERSION_V2, nil},
		{"plpmtud_probe_interval", 4, 4, "PLPMTUDProbeInterval", 0x004c4b40, nil},
		{"initial_smoothed_rtt", 8, 4, "InitialSmoothedRTT", 0x00007530, nil},
		{"payload_cipher_type", 12, 4, "PayloadCipherType", 54, nil},
		{"congestion_control_algo", 16, 1, "CongestionControlAlgo", 1, nil},
		{"validate_peer_address", 17, 1, "ValidatePeerAddress", 1, nil},
		{"stream_data_nodelay", 18, 1, "StreamDataNodelay", 1, nil},
		{"receive_session_ticket", 19, 1, "ReceiveSessionTicket", 0x05, nil},
		{"certificate_request", 20, 1, "CertificateRequest", 0x02, nil},
		{"reserved", 21, 3, "", 0, nil},
		{"keepalive_probe_interval", 24, 4, "KeepaliveProbeInterval", 0x0016e360, nil},
	}, func(b []byte) (any, error) { return UnmarshalConfig(b) }},

	{"quic_crypto_secret", SizeofCryptoSecret, CryptoSecret{}, []fieldAt{
		{"send", 0, 1, "Send", 1, nil},
		{"level", 1, 1, "Level", 2, nil},
		{"reserved", 2, 2, "", 0, nil},
		{"type", 4, 4, "Type", 52, nil},
		{"secret", 8, 48, "Secret", 0, seq(48, 0x80)},
	}, func(b []byte) (any, error) { return UnmarshalCryptoSecret(b) }},

	{"quic_errinfo", SizeofErrInfo, ErrInfo{}, []fieldAt{
		{"stream_id", 0, 8, "StreamID", 0x0102030405060708, nil},
		{"errcode", 8, 4, "ErrCode", 0xa1b2c3d4, nil},
	}, func(b []byte) (any, error) { return UnmarshalErrInfo(b) }},

	{"quic_connection_id_info", SizeofConnectionIDInfo, ConnectionIDInfo{}, []fieldAt{
		{"dest", 0, 1, "Dest", 1, nil},
		{"reserved", 1, 3, "", 0, nil},
		{"active", 4, 4, "Active", 0x0a0b0c0d, nil},
		{"prior_to", 8, 4, "PriorTo", 0x01020304, nil},
	}, func(b []byte) (any, error) { return UnmarshalConnectionIDInfo(b) }},

	{"quic_event_option", SizeofEventOption, EventOption{}, []fieldAt{
		{"type", 0, 1, "Type", 9, nil},
		{"on", 1, 1, "On", 1, nil},
	}, func(b []byte) (any, error) { return UnmarshalEventOption(b) }},

	{"quic_connection_close", SizeofConnectionClose, ConnectionClose{}, []fieldAt{
		{"errcode", 0, 4, "ErrCode", 0x0000010a, nil},
		{"frame", 4, 1, "Frame", 0x1c, nil},
		{"reserved", 5, 3, "", 0, nil},
		{"phrase", 8, 64, "Phrase", 0, []byte("this is app err")},
	}, func(b []byte) (any, error) { return UnmarshalConnectionClose(b) }},

	{"quic_stream_info", SizeofStreamInfo, StreamInfo{}, []fieldAt{
		{"stream_id", 0, 8, "StreamID", 0xfffffffffffffffe, nil}, // -2
		{"stream_flags", 8, 4, "Flags", MSG_QUIC_STREAM_NEW | MSG_QUIC_STREAM_FIN, nil},
	}, func(b []byte) (any, error) { return UnmarshalStreamInfo(b) }},

	{"quic_handshake_info", SizeofHandshakeInfo, HandshakeInfo{}, []fieldAt{
		{"crypto_level", 0, 1, "Level", 3, nil},
	}, func(b []byte) (any, error) { return UnmarshalHandshakeInfo(b) }},

	{"quic_stream_update", SizeofStreamUpdate, StreamUpdate{}, []fieldAt{
		{"id", 0, 8, "ID", 0x00000000000001ea, nil},
		{"state", 8, 1, "State", 10, nil},
		{"reserved", 9, 3, "", 0, nil},
		{"errcode", 12, 4, "ErrCode", 0xdeadbeef, nil},
		{"finalsz", 16, 8, "FinalSize", 0x0807060504030201, nil},
	}, func(b []byte) (any, error) { return UnmarshalStreamUpdate(b) }},

	{"quic_stream_max_data", SizeofStreamMaxData, StreamMaxData{}, []fieldAt{
		{"id", 0, 8, "ID", 0x8000000000000003, nil},
		{"max_data", 8, 8, "MaxData", 0x00000000001fffe0, nil},
	}, func(b []byte) (any, error) { return UnmarshalStreamMaxData(b) }},
}

// setField stores f's test value in the Go field of v (a settable struct).
func setField(t *testing.T, v reflect.Value, f fieldAt) {
	t.Helper()
	fv := v.FieldByName(f.goName)
	if !fv.IsValid() {
		t.Fatalf("no Go field %s for %s", f.goName, f.cname)
	}
	switch fv.Kind() {
	case reflect.Bool:
		fv.SetBool(f.val != 0)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fv.SetUint(f.val)
	case reflect.Int64:
		fv.SetInt(int64(f.val))
	case reflect.String:
		fv.SetString(string(f.raw))
	case reflect.Array:
		reflect.Copy(fv, reflect.ValueOf(f.raw))
	default:
		t.Fatalf("field %s: unhandled kind %v", f.goName, fv.Kind())
	}
}

// putExpected writes f's test value into b at f's offset.
func putExpected(b []byte, f fieldAt) {
	if f.raw != nil {
		copy(b[f.off:f.off+f.size], f.raw)
		return
	}
	p := b[f.off:]
	switch f.size {
	case 1:
		p[0] = byte(f.val)
	case 2:
		binary.NativeEndian.PutUint16(p, uint16(f.val))
	case 4:
		binary.NativeEndian.PutUint32(p, uint32(f.val))
	case 8:
		binary.NativeEndian.PutUint64(p, f.val)
	default:
		// reserved arrays stay zero
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	m, ok := v.(interface{ Marshal() []byte })
	if !ok {
		t.Fatalf("%T has no Marshal method", v)
	}
	return m.Marshal()
}

func TestSizes(t *testing.T) {
	for _, c := range layouts {
		if got := len(marshal(t, c.zero)); got != c.size {
			t.Errorf("struct %s: Marshal gives %d bytes, Sizeof says %d", c.cname, got, c.size)
		}
		last := c.fields[len(c.fields)-1]
		if end := last.off + last.size; end > c.size {
			t.Errorf("struct %s: last member ends at %d, beyond size %d", c.cname, end, c.size)
		}
	}
	want := map[string]int{ // notes §1.2 and §1.8
		"quic_transport_param": 56, "quic_config": 28, "quic_crypto_secret": 56, "quic_errinfo": 16,
		"quic_connection_id_info": 12, "quic_event_option": 2, "quic_connection_close": 72,
		"quic_stream_info": 16, "quic_handshake_info": 1, "quic_stream_update": 24, "quic_stream_max_data": 16,
	}
	if len(want) != len(layouts) {
		t.Errorf("%d sizes pinned but %d layouts", len(want), len(layouts))
	}
	for _, c := range layouts {
		if want[c.cname] != c.size {
			t.Errorf("struct %s: Sizeof is %d, notes say %d", c.cname, c.size, want[c.cname])
		}
	}
}

// TestFieldOffsets sets one field at a time and checks that Marshal writes
// exactly that field's bytes at its offset and nothing else, then sets all
// fields at once and checks the whole encoding and the decoding.
func TestFieldOffsets(t *testing.T) {
	for _, c := range layouts {
		t.Run(c.cname, func(t *testing.T) {
			all := reflect.New(reflect.TypeOf(c.zero)).Elem()
			wantAll := make([]byte, c.size)
			for _, f := range c.fields {
				putExpected(wantAll, f)
				if f.goName == "" {
					continue
				}
				one := reflect.New(reflect.TypeOf(c.zero)).Elem()
				setField(t, one, f)
				setField(t, all, f)
				want := make([]byte, c.size)
				putExpected(want, f)
				if got := marshal(t, one.Interface()); !bytes.Equal(got, want) {
					t.Errorf("only %s (%s) set: got\n% x\nwant (member @%d, %d bytes)\n% x", f.cname, f.goName, got, f.off, f.size, want)
				}
			}
			got := marshal(t, all.Interface())
			if !bytes.Equal(got, wantAll) {
				t.Errorf("all fields set: got\n% x\nwant\n% x", got, wantAll)
			}
			dec, err := c.decode(wantAll)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if dec != all.Interface() {
				t.Errorf("decode: got %+v, want %+v", dec, all.Interface())
			}
			// Reserved and padding bytes are ignored when decoding.
			dirty := append([]byte{}, wantAll...)
			for i := range dirty {
				covered := false
				for _, f := range c.fields {
					if f.goName != "" && i >= f.off && i < f.off+f.size {
						covered = true
					}
				}
				if !covered {
					dirty[i] = 0xa5
				}
			}
			if dec, err := c.decode(dirty); err != nil || dec != all.Interface() {
				t.Errorf("decode with non-zero reserved bytes: got %+v, %v; want %+v", dec, err, all.Interface())
			}
		})
	}
}

func TestDecodeLength(t *testing.T) {
	for _, c := range layouts {
		full := make([]byte, c.size+5)
		if _, err := c.decode(full); err != nil {
			t.Errorf("struct %s: %d bytes (longer than the struct): %v", c.cname, len(full), err)
		}
		for _, n := range []int{0, c.size - 1} {
			_, err := c.decode(full[:n])
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("struct %s: %d bytes: got error %v, want ErrTruncated", c.cname, n, err)
			}
		}
	}
	_, err := UnmarshalConfig(make([]byte, 27))
	if want := "quicabi: decoding struct quic_config: got 27 bytes, need 28: buffer too short"; err == nil || err.Error() != want {
		t.Errorf("error text: got %q, want %q", err, want)
	}
}

func TestRoundTripValues(t *testing.T) {
	vals := []any{
		TransportParam{MaxDatagramFrameSize: 1400, MaxIdleTimeout: 30_000_000, MaxData: 2097120, DisableCompatibleVersion: true},
		Config{Version: QUIC_VERSION_V1, CongestionControlAlgo: QUIC_CONG_ALG_CUBIC, KeepaliveProbeInterval: 1_500_000},
		CryptoSecret{Send: true, Level: QUIC_CRYPTO_APP, Type: TLS_CIPHER_AES_GCM_128, Secret: [48]byte{1, 2, 3}},
		ErrInfo{StreamID: -1, ErrCode: 1},
		ConnectionIDInfo{Dest: true, Active: 8, PriorTo: 5},
		EventOption{Type: QUIC_EVENT_NEW_SESSION_TICKET, On: true},
		ConnectionClose{ErrCode: 10, Phrase: string(bytes.Repeat([]byte{'x'}, 64))},
		ConnectionClose{},
		StreamInfo{StreamID: -1, Flags: MSG_QUIC_STREAM_UNI | MSG_QUIC_STREAM_DONTWAIT},
		HandshakeInfo{Level: QUIC_CRYPTO_EARLY},
		StreamUpdate{ID: 107, State: QUIC_STREAM_RECV_STATE_RESET_RECVD, ErrCode: 1, FinalSize: 5},
		StreamMaxData{ID: 1 << 62, MaxData: 1 << 40},
	}
	for _, v := range vals {
		var dec func([]byte) (any, error)
		for _, c := range layouts {
			if reflect.TypeOf(c.zero) == reflect.TypeOf(v) {
				dec = c.decode
			}
		}
		got, err := dec(marshal(t, v))
		if err != nil || got != v {
			t.Errorf("%T: decode(encode(x)) = %+v, %v; want %+v", v, got, err, v)
		}
	}
}

func TestCryptoSecret(t *testing.T) {
	secret := seq(48, 1)
	s, err := NewCryptoSecret(true, QUIC_CRYPTO_HANDSHAKE, TLS_CIPHER_AES_GCM_256, secret)
	if err != nil {
		t.Fatal(err)
	}
	b := s.Marshal()
	if b[0] != 1 || b[1] != 2 || binary.NativeEndian.Uint32(b[4:]) != 52 || !bytes.Equal(b[8:], secret) {
		t.Errorf("encoded secret: % x", b)
	}
	s, err = NewCryptoSecret(false, QUIC_CRYPTO_APP, TLS_CIPHER_CHACHA20_POLY1305, secret[:32])
	if err != nil {
		t.Fatal(err)
	}
	if b := s.Marshal(); b[0] != 0 || !bytes.Equal(b[8:40], secret[:32]) || !bytes.Equal(b[40:], make([]byte, 16)) {
		t.Errorf("encoded 32-byte secret: % x", b)
	}
	s.Zero()
	if s.Secret != [48]byte{} {
		t.Errorf("Zero left %x", s.Secret)
	}
	for _, tc := range []struct {
		level  CryptoLevel
		cipher CipherType
		n      int
	}{
		{QUIC_CRYPTO_INITIAL, TLS_CIPHER_AES_GCM_128, 32},
		{QUIC_CRYPTO_MAX, TLS_CIPHER_AES_GCM_128, 32},
		{QUIC_CRYPTO_APP, TLS_CIPHER_AES_GCM_128, 48},
		{QUIC_CRYPTO_APP, TLS_CIPHER_AES_GCM_256, 32},
		{QUIC_CRYPTO_APP, 55, 32},
	} {
		if _, err := NewCryptoSecret(true, tc.level, tc.cipher, secret[:tc.n]); err == nil {
			t.Errorf("NewCryptoSecret(%v, %v, %d bytes) succeeded", tc.level, tc.cipher, tc.n)
		}
	}
}

func TestConnectionCloseValidate(t *testing.T) {
	ok := ConnectionClose{Phrase: string(bytes.Repeat([]byte{'a'}, 63))}
	if err := ok.Validate(); err != nil {
		t.Errorf("63-byte phrase: %v", err)
	}
	for _, p := range []string{string(bytes.Repeat([]byte{'a'}, 64)), "a\x00b"} {
		if err := (ConnectionClose{Phrase: p}).Validate(); err == nil {
			t.Errorf("phrase %q accepted", p)
		}
	}
	// Decoding stops at the NUL.
	b := ConnectionClose{ErrCode: 1, Phrase: "ab\x00cd"}.Marshal()
	if c, _ := UnmarshalConnectionClose(b); c.Phrase != "ab" {
		t.Errorf("phrase %q, want %q", c.Phrase, "ab")
	}
}

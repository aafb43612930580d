package kquic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestPrintsTheSameEverywhere pins what the package's values print: this
// file builds on every platform, and the values are declared once, so
// `GOOS=darwin go test` (or windows, freebsd) checks the same table as
// Linux does. Off Linux the API is stubs, but an error or event a program
// prints, logs or compares must read the same.
func TestPrintsTheSameEverywhere(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{&CloseError{Remote: true, Application: true, ErrorCode: 0x100, Reason: "bye"},
			`kquic: connection closed by the peer with application error code 0x100: "bye"`},
		{&CloseError{Application: true},
			`kquic: connection closed by us with application error code 0x0`},
		{&CloseError{Remote: true, TransportErrorCode: FlowControlError, FrameType: 0x8},
			`kquic: connection closed by the peer with transport error FLOW_CONTROL_ERROR (0x3), frame 0x8`},
		{&CloseError{Remote: true, TransportErrorCode: CryptoError + 120, FrameType: 0x6, Reason: "alpn"},
			`kquic: connection closed by the peer with transport error CRYPTO_ERROR(alert 120: no application protocol) (0x178), frame 0x6: "alpn"`},
		{&CloseError{TransportErrorCode: 0x5555},
			`kquic: connection closed by us with transport error 0x5555 (0x5555), frame 0x0`},
		{&IdleTimeoutError{},
			`kquic: connection closed: idle timeout (no packet from the peer within max_idle_timeout)`},
		{&StreamError{StreamID: 4, ErrorCode: 7, Remote: true}, `kquic: stream 4 was reset by the peer with code 0x7`},
		{&StreamError{StreamID: 3, ErrorCode: MaxErrorCode}, `kquic: stream 3 was reset locally with code 0xffffffff`},
		{&DatagramTooLargeError{Size: 2000, Max: 1156}, `kquic: datagram of 2000 bytes is over the connection's limit of 1156`},
		{&DatagramTooLargeError{Size: 70000}, `kquic: datagram of 70000 bytes does not fit in one packet`},
		{ErrNotSupported, `kernel QUIC is not supported here: unsupported operation`},
		{ErrClosed, `kquic: connection closed: use of closed network connection`},
		{ErrCodeTooLarge, `the kernel QUIC module carries error codes of up to 32 bits (at most 0xffffffff)`},
		{NoError, `NO_ERROR`},
		{ApplicationErrorErrorCode, `APPLICATION_ERROR`},
		{VersionNegotiationError, `VERSION_NEGOTIATION_ERROR`},
		{CryptoError + 42, `CRYPTO_ERROR(alert 42: bad certificate)`},
		{CryptoError + 0xff, `CRYPTO_ERROR(alert 255)`},
		{TransportErrorCode(0x12), `0x12`},
		{EventStreamUpdate, `STREAM_UPDATE`},
		{EventMaxStreams, `STREAM_MAX_STREAM`},
		{EventNewSessionTicket, `NEW_SESSION_TICKET`},
		{EventType(0), `NONE`},
		{EventType(42), `EventType(42)`},
		{StreamState(0), `SEND_STATE_READY`},
		{StreamState(10), `RECV_STATE_RESET_RECVD`},
		{StreamState(12), `StreamState(12)`},
		{&StreamUpdateEvent{StreamID: 8, State: 10, ErrorCode: 1, FinalSize: 99}, `&{StreamID:8 State:RECV_STATE_RESET_RECVD ErrorCode:1 FinalSize:99}`},
		{&ConnectionCloseEvent{TransportErrorCode: ProtocolViolation, FrameType: 0x1c}, `&{Application:false ErrorCode:0 TransportErrorCode:PROTOCOL_VIOLATION FrameType:28 Reason:}`},
		{TransportParameters{MaxIdleTimeout: 30 * time.Second, MaxAckDelay: 25 * time.Millisecond, MaxData: 1 << 20, MaxStreamsBidi: 100, AckDelayExponent: 3, StatelessReset: true},
			`{MaxIdleTimeout:30s MaxAckDelay:25ms MaxData:1048576 MaxStreamDataBidiLocal:0 MaxStreamDataBidiRemote:0 MaxStreamDataUni:0 MaxStreamsBidi:100 MaxStreamsUni:0 MaxDatagramFrameSize:0 MaxUDPPayloadSize:0 AckDelayExponent:3 ActiveConnectionIDLimit:0 DisableActiveMigration:false GreaseQUICBit:false StatelessReset:true Disable1RTTEncryption:false DisableCompatibleVersion:false}`},
		{Version1, `1`},
		{Version2, `1798521807`},
		{Cubic, `1`},
	}
	for _, c := range cases {
		var got string
		switch v := c.v.(type) {
		case error:
			got = v.Error()
		case fmt.Stringer:
			got = v.String()
		default:
			got = fmt.Sprintf("%+v", v)
		}
		if got != c.want {
			t.Errorf("%T %#v prints\n\t%s\nwant\n\t%s", c.v, c.v, got, c.want)
		}
	}
}

var testTLS = &tls.Config{}

// TestConfigErrorsTheSameEverywhere: the configuration is checked by the same
// code on every platform, with the same messages.
func TestConfigErrorsTheSameEverywhere(t *testing.T) {
	cases := []struct {
		cfg  *Config
		want string
	}{
		{nil, `kquic: Config.TLS is required (certificates, ServerName, NextProtos)`},
		{&Config{TLS: testTLS, Transport: TransportParameters{MaxIdleTimeout: time.Millisecond, AckDelayExponent: 21}},
			"kquic: transport parameters: MaxIdleTimeout 1ms: must be at least 1s (and under 71 minutes)\nAckDelayExponent 21: must be at most 20"},
		{&Config{TLS: testTLS, InitialRTT: 7 * time.Second, DatagramQueue: -1, EventQueue: -2, Events: []EventType{EventKeyUpdate, 0}},
			"kquic: config: InitialRTT 7s: must be 1ms..6s\nBacklog 0, MaxHandshakes 0, AcceptQueue 0, DatagramQueue -1, EventQueue -2: must not be negative\nEvents: unknown event type 0"},
		{&Config{TLS: testTLS, Transport: TransportParameters{MaxData: 1 << 30}, KeepAlive: time.Second}, `kquic: transport parameters: MaxData 1073741824: must be 1200..536870911`},
		{&Config{TLS: testTLS, KeepAlive: 1500 * time.Millisecond, CongestionControl: Cubic}, `<nil>`},
	}
	for _, c := range cases {
		if got := fmt.Sprint(c.cfg.validate()); got != c.want {
			t.Errorf("%+v: validate() = %q, want %q", c.cfg, got, c.want)
		}
	}
}

// TestKernelCode: a code fits the kernel's 32 bits or is refused, never cut.
func TestKernelCode(t *testing.T) {
	if got, err := kernelCode("close", ApplicationErrorCode(MaxErrorCode)); got != MaxErrorCode || err != nil {
		t.Errorf("kernelCode(MaxErrorCode) = %#x, %v", got, err)
	}
	got, err := kernelCode("reset stream 4", StreamErrorCode(MaxErrorCode+1))
	if got != 0 || !errors.Is(err, ErrCodeTooLarge) {
		t.Fatalf("kernelCode(MaxErrorCode+1) = %#x, %v; want an error matching ErrCodeTooLarge", got, err)
	}
	const want = "kquic: reset stream 4 with error code 0x100000000: the kernel QUIC module carries error codes of up to 32 bits (at most 0xffffffff); nothing was sent"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if a, ok := (CryptoError + 120).TLSAlert(); a != 120 || !ok {
		t.Errorf("TLSAlert of 0x178 = %d, %v", a, ok)
	}
	if _, ok := FlowControlError.TLSAlert(); ok {
		t.Error("FLOW_CONTROL_ERROR carries a TLS alert")
	}
}

package tlsagent

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
)

// The values of include/uapi/linux/handshake.h (generated from
// Documentation/netlink/specs/handshake.yaml), written out once more so that
// a slip in abi.go fails here.
func TestABIValues(t *testing.T) {
	pins := []struct {
		name      string
		got, want uint64
	}{
		{"HANDSHAKE_FAMILY_VERSION", familyVersion, 1},
		{"HANDSHAKE_HANDLER_CLASS_NONE", handlerClassNone, 0},
		{"HANDSHAKE_HANDLER_CLASS_TLSHD", handlerClassTLSHD, 1},
		{"HANDSHAKE_MSG_TYPE_UNSPEC", uint64(MessageTypeUnspec), 0},
		{"HANDSHAKE_MSG_TYPE_CLIENTHELLO", uint64(MessageTypeClientHello), 1},
		{"HANDSHAKE_MSG_TYPE_SERVERHELLO", uint64(MessageTypeServerHello), 2},
		{"HANDSHAKE_AUTH_UNSPEC", uint64(AuthUnspec), 0},
		{"HANDSHAKE_AUTH_UNAUTH", uint64(AuthUnauth), 1},
		{"HANDSHAKE_AUTH_PSK", uint64(AuthPSK), 2},
		{"HANDSHAKE_AUTH_X509", uint64(AuthX509), 3},
		{"HANDSHAKE_A_X509_CERT", attrX509Cert, 1},
		{"HANDSHAKE_A_X509_PRIVKEY", attrX509Privkey, 2},
		{"HANDSHAKE_A_ACCEPT_SOCKFD", attrAcceptSockfd, 1},
		{"HANDSHAKE_A_ACCEPT_HANDLER_CLASS", attrAcceptHandlerClass, 2},
		{"HANDSHAKE_A_ACCEPT_MESSAGE_TYPE", attrAcceptMessageType, 3},
		{"HANDSHAKE_A_ACCEPT_TIMEOUT", attrAcceptTimeout, 4},
		{"HANDSHAKE_A_ACCEPT_AUTH_MODE", attrAcceptAuthMode, 5},
		{"HANDSHAKE_A_ACCEPT_PEER_IDENTITY", attrAcceptPeerIdentity, 6},
		{"HANDSHAKE_A_ACCEPT_CERTIFICATE", attrAcceptCertificate, 7},
		{"HANDSHAKE_A_ACCEPT_PEERNAME", attrAcceptPeername, 8},
		{"HANDSHAKE_A_ACCEPT_KEYRING", attrAcceptKeyring, 9},
		{"HANDSHAKE_A_DONE_STATUS", attrDoneStatus, 1},
		{"HANDSHAKE_A_DONE_SOCKFD", attrDoneSockfd, 2},
		{"HANDSHAKE_A_DONE_REMOTE_AUTH", attrDoneRemoteAuth, 3},
		{"HANDSHAKE_CMD_READY", cmdReady, 1},
		{"HANDSHAKE_CMD_ACCEPT", cmdAccept, 2},
		{"HANDSHAKE_CMD_DONE", cmdDone, 3},
		{"TLS_NO_KEYRING", tlsNoKeyring, 0},
		{"TLS_NO_PEERID", tlsNoPeerID, 0},
		{"TLS_NO_CERT", tlsNoCert, 0},
		{"TLS_NO_PRIVKEY", tlsNoPrivkey, 0},
	}
	for _, p := range pins {
		if p.got != p.want {
			t.Errorf("%s = %d, the kernel's is %d", p.name, p.got, p.want)
		}
	}
	if familyName != "handshake" || groupTLSHD != "tlshd" {
		t.Errorf("family %q group %q, the kernel's are \"handshake\" and \"tlshd\"", familyName, groupTLSHD)
	}
}

// nla is one netlink attribute in the host's byte order, padded to 4.
func nla(typ uint16, data []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(data)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestAcceptMessageBytes(t *testing.T) {
	m := acceptMessage()
	if m.Header.Command != 2 || m.Header.Version != 1 {
		t.Errorf("header %+v, want command 2 (accept), version 1", m.Header)
	}
	// handler-class = tlshd: len 8, type 2, value 1.
	want := []byte{8, 0, 2, 0, 1, 0, 0, 0}
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		want = []byte{0, 8, 0, 2, 0, 0, 0, 1}
	}
	if !bytes.Equal(m.Data, want) {
		t.Errorf("accept attributes % x, want % x", m.Data, want)
	}
}

func TestParseAccept(t *testing.T) {
	data := cat(
		nla(attrAcceptSockfd, u32(7)),
		nla(attrAcceptMessageType, u32(1)),
		nla(attrAcceptTimeout, u32(3000)),
		nla(attrAcceptAuthMode, u32(2)),
		nla(attrAcceptPeerIdentity, u32(0x1234)),
		nla(attrAcceptPeerIdentity, u32(0x5678)),
		nla(attrAcceptPeername, []byte("server.test\x00")),
		nla(attrAcceptKeyring, u32(99)),
		nla(attrAcceptCertificate|0x8000, cat(nla(attrX509Cert, u32(11)), nla(attrX509Privkey, u32(12)))),
		nla(42, u32(1)), // an attribute of a later kernel is ignored
	)
	r, err := parseAccept(genetlink.Message{Header: genetlink.Header{Command: cmdAccept, Version: 1}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if r.FD != 7 || r.Type != MessageTypeClientHello || r.Timeout != 3*time.Second || r.Auth != AuthPSK ||
		len(r.PeerIDs) != 2 || r.PeerIDs[0] != 0x1234 || r.PeerIDs[1] != 0x5678 || r.PeerName != "server.test" ||
		r.Keyring != 99 || !r.Certificate || r.CertSerial != 11 || r.KeySerial != 12 {
		t.Errorf("parsed %+v", r)
	}
	if got := r.String(); got != "fd 7 client_hello/psk" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseAcceptBad(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    genetlink.Message
	}{
		{"no socket", genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: nla(attrAcceptAuthMode, u32(3))}},
		{"negative socket", genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: nla(attrAcceptSockfd, u32(0xffffffff))}},
		{"wrong command", genetlink.Message{Header: genetlink.Header{Command: cmdDone}, Data: nla(attrAcceptSockfd, u32(3))}},
		{"truncated", genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: []byte{8, 0, 1}}},
		{"short u32", genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: nla(attrAcceptSockfd, []byte{1, 2})}},
	} {
		if r, err := parseAccept(tc.m); err == nil {
			t.Errorf("%s: parsed %+v, want an error", tc.name, r)
		} else if r != nil && r.FD < 0 {
			t.Errorf("%s: a request with fd %d returned with the error", tc.name, r.FD)
		}
	}
}

// A reply that breaks after the socket still names it, so it can be answered.
func TestParseAcceptBadAfterSocket(t *testing.T) {
	data := cat(nla(attrAcceptSockfd, u32(9)), nla(attrAcceptTimeout, []byte{1}))
	r, err := parseAccept(genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: data})
	if err == nil || r == nil || r.FD != 9 {
		t.Errorf("got %+v, %v; want fd 9 with an error", r, err)
	}
}

func TestDoneMessageBytes(t *testing.T) {
	m, err := doneMessage(5, 0, []int32{0x2a, 0x2b})
	if err != nil {
		t.Fatal(err)
	}
	want := cat(nla(attrDoneStatus, u32(0)), nla(attrDoneSockfd, u32(5)), nla(attrDoneRemoteAuth, u32(0x2a)), nla(attrDoneRemoteAuth, u32(0x2b)))
	if m.Header.Command != 3 || m.Header.Version != 1 || !bytes.Equal(m.Data, want) {
		t.Errorf("done %+v % x, want command 3 and % x", m.Header, m.Data, want)
	}
	// A failure carries no peer identity.
	m, err = doneMessage(5, 110, []int32{0x2a})
	if err != nil {
		t.Fatal(err)
	}
	want = cat(nla(attrDoneStatus, u32(110)), nla(attrDoneSockfd, u32(5)))
	if !bytes.Equal(m.Data, want) {
		t.Errorf("failed done % x, want % x", m.Data, want)
	}
}

func TestIsReady(t *testing.T) {
	ready := genetlink.Message{Header: genetlink.Header{Command: cmdReady}, Data: nla(attrAcceptHandlerClass, u32(handlerClassTLSHD))}
	if !isReady(ready) {
		t.Error("READY for tlshd not recognised")
	}
	other := genetlink.Message{Header: genetlink.Header{Command: cmdReady}, Data: nla(attrAcceptHandlerClass, u32(7))}
	if isReady(other) {
		t.Error("READY for class 7 taken as tlshd's")
	}
	if isReady(genetlink.Message{Header: genetlink.Header{Command: cmdDone}, Data: ready.Data}) {
		t.Error("DONE taken as READY")
	}
}

func FuzzParseAccept(f *testing.F) {
	f.Add(cat(nla(attrAcceptSockfd, u32(7)), nla(attrAcceptCertificate|0x8000, nla(attrX509Cert, u32(1)))))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseAccept(genetlink.Message{Header: genetlink.Header{Command: cmdAccept}, Data: b})
	})
}

package tlsagent

import "strconv"

// The handshake generic netlink family's ABI, from the kernel's
// Documentation/netlink/specs/handshake.yaml (generated into
// include/uapi/linux/handshake.h). Every value here is pinned by abi_test.go;
// nothing else in the package spells a number of the family.
const (
	familyName    = "handshake" // HANDSHAKE_FAMILY_NAME
	familyVersion = 1           // HANDSHAKE_FAMILY_VERSION
	groupTLSHD    = "tlshd"     // HANDSHAKE_MCGRP_TLSHD
)

// enum handshake_handler_class
const (
	handlerClassNone  = 0 // HANDSHAKE_HANDLER_CLASS_NONE
	handlerClassTLSHD = 1 // HANDSHAKE_HANDLER_CLASS_TLSHD
)

// MessageType is enum handshake_msg_type: which side of the handshake the
// kernel consumer asks for.
type MessageType uint32

// The handshake's sides.
const (
	MessageTypeUnspec      MessageType = 0 // HANDSHAKE_MSG_TYPE_UNSPEC
	MessageTypeClientHello MessageType = 1 // HANDSHAKE_MSG_TYPE_CLIENTHELLO: we are the client
	MessageTypeServerHello MessageType = 2 // HANDSHAKE_MSG_TYPE_SERVERHELLO: we are the server
)

func (t MessageType) String() string {
	switch t {
	case MessageTypeClientHello:
		return "client_hello"
	case MessageTypeServerHello:
		return "server_hello"
	case MessageTypeUnspec:
		return "unspec"
	}
	return "message type " + strconv.FormatUint(uint64(t), 10)
}

// AuthMode is enum handshake_auth: how the consumer wants the peers
// authenticated.
type AuthMode uint32

// The authentication modes.
const (
	AuthUnspec AuthMode = 0 // HANDSHAKE_AUTH_UNSPEC
	AuthUnauth AuthMode = 1 // HANDSHAKE_AUTH_UNAUTH: no authentication of the peer (the client does not check the server)
	AuthPSK    AuthMode = 2 // HANDSHAKE_AUTH_PSK: a pre-shared key from the kernel keyring
	AuthX509   AuthMode = 3 // HANDSHAKE_AUTH_X509: certificates
)

func (a AuthMode) String() string {
	switch a {
	case AuthUnspec:
		return "unspec"
	case AuthUnauth:
		return "unauth"
	case AuthPSK:
		return "psk"
	case AuthX509:
		return "x509"
	}
	return "auth mode " + strconv.FormatUint(uint64(a), 10)
}

// Attributes of the x509 nest (HANDSHAKE_A_ACCEPT_CERTIFICATE).
const (
	attrX509Cert    = 1 // HANDSHAKE_A_X509_CERT: u32 key serial
	attrX509Privkey = 2 // HANDSHAKE_A_X509_PRIVKEY: u32 key serial
)

// Attributes of the accept command (and of the READY notification, which
// carries only the handler class).
const (
	attrAcceptSockfd       = 1 // HANDSHAKE_A_ACCEPT_SOCKFD: s32
	attrAcceptHandlerClass = 2 // HANDSHAKE_A_ACCEPT_HANDLER_CLASS: u32 enum handler-class
	attrAcceptMessageType  = 3 // HANDSHAKE_A_ACCEPT_MESSAGE_TYPE: u32 enum msg-type
	attrAcceptTimeout      = 4 // HANDSHAKE_A_ACCEPT_TIMEOUT: u32 milliseconds
	attrAcceptAuthMode     = 5 // HANDSHAKE_A_ACCEPT_AUTH_MODE: u32 enum auth
	attrAcceptPeerIdentity = 6 // HANDSHAKE_A_ACCEPT_PEER_IDENTITY: u32 key serial, multi-attr
	attrAcceptCertificate  = 7 // HANDSHAKE_A_ACCEPT_CERTIFICATE: nest x509, multi-attr
	attrAcceptPeername     = 8 // HANDSHAKE_A_ACCEPT_PEERNAME: string
	attrAcceptKeyring      = 9 // HANDSHAKE_A_ACCEPT_KEYRING: u32 key serial
)

// Attributes of the done command.
const (
	attrDoneStatus     = 1 // HANDSHAKE_A_DONE_STATUS: u32, a positive errno, 0 for success
	attrDoneSockfd     = 2 // HANDSHAKE_A_DONE_SOCKFD: s32
	attrDoneRemoteAuth = 3 // HANDSHAKE_A_DONE_REMOTE_AUTH: u32 key serial, multi-attr
)

// Commands.
const (
	cmdReady  = 1 // HANDSHAKE_CMD_READY: notification, a request is pending
	cmdAccept = 2 // HANDSHAKE_CMD_ACCEPT: take the next pending request
	cmdDone   = 3 // HANDSHAKE_CMD_DONE: report the result
)

// Key serials the kernel uses for "none" (include/net/handshake.h).
const (
	tlsNoKeyring = 0 // TLS_NO_KEYRING
	tlsNoPeerID  = 0 // TLS_NO_PEERID
	tlsNoCert    = 0 // TLS_NO_CERT
	tlsNoPrivkey = 0 // TLS_NO_PRIVKEY
)

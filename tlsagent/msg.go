package tlsagent

import (
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// Request is one handshake request as the kernel hands it over in its reply
// to HANDSHAKE_CMD_ACCEPT.
type Request struct {
	// FD is the socket, installed in this process by the accept (close-on-exec).
	FD          int
	Type        MessageType
	Auth        AuthMode
	Timeout     time.Duration // 0: the consumer set none
	PeerName    string        // the name to check the server's certificate against (client), if the consumer gave one
	Keyring     int32         // a keyring the consumer linked for this request (0: none)
	PeerIDs     []int32       // PSK: the key serials to offer (client) or the one to expect (server)
	CertSerial  int32         // x509: the key serial of our certificate (0: from the configuration file)
	KeySerial   int32         // x509: the key serial of our private key (0: from the configuration file)
	Certificate bool          // an x509 nest was present
}

// String names the request for log lines.
func (r *Request) String() string {
	return fmt.Sprintf("fd %d %s/%s", r.FD, r.Type, r.Auth)
}

// acceptMessage is the HANDSHAKE_CMD_ACCEPT request for the tlshd class.
func acceptMessage() genetlink.Message {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrAcceptHandlerClass, handlerClassTLSHD)
	b, _ := ae.Encode() // one u32 attribute cannot fail
	return genetlink.Message{
		Header: genetlink.Header{Command: cmdAccept, Version: familyVersion},
		Data:   b,
	}
}

// parseAccept decodes the kernel's reply to HANDSHAKE_CMD_ACCEPT. A reply
// without a socket is an error; other attributes keep their zero values when
// absent, as in the kernel (a timeout of 0 means none was set). On a decoding
// error after the socket was read, the Request is returned with the error,
// so that the caller can still answer it.
func parseAccept(m genetlink.Message) (*Request, error) {
	if m.Header.Command != cmdAccept {
		return nil, fmt.Errorf("handshake accept: reply has command %d, want %d (accept)", m.Header.Command, cmdAccept)
	}
	ad, err := netlink.NewAttributeDecoder(m.Data)
	if err != nil {
		return nil, fmt.Errorf("handshake accept: decode reply: %w", err)
	}
	r := &Request{FD: -1}
	haveFD := false
	for ad.Next() {
		switch ad.Type() {
		case attrAcceptSockfd:
			r.FD = int(ad.Int32())
			haveFD = true
		case attrAcceptMessageType:
			r.Type = MessageType(ad.Uint32())
		case attrAcceptTimeout:
			r.Timeout = time.Duration(ad.Uint32()) * time.Millisecond
		case attrAcceptAuthMode:
			r.Auth = AuthMode(ad.Uint32())
		case attrAcceptPeerIdentity:
			r.PeerIDs = append(r.PeerIDs, ad.Int32())
		case attrAcceptCertificate:
			r.Certificate = true
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					switch nad.Type() {
					case attrX509Cert:
						r.CertSerial = nad.Int32()
					case attrX509Privkey:
						r.KeySerial = nad.Int32()
					}
				}
				return nil
			})
		case attrAcceptPeername:
			r.PeerName = ad.String()
		case attrAcceptKeyring:
			r.Keyring = ad.Int32()
		}
	}
	if err := ad.Err(); err != nil {
		if !haveFD || r.FD < 0 {
			r = nil
		}
		return r, fmt.Errorf("handshake accept: decode reply: %w", err)
	}
	if !haveFD || r.FD < 0 {
		return nil, errors.New("handshake accept: the reply names no socket")
	}
	return r, nil
}

// doneMessage is HANDSHAKE_CMD_DONE for the socket fd: status is a positive
// errno (0: success), remote the key serials that identify the peer.
func doneMessage(fd int, status uint32, remote []int32) (genetlink.Message, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrDoneStatus, status)
	ae.Int32(attrDoneSockfd, int32(fd))
	if status == 0 {
		for _, id := range remote {
			ae.Uint32(attrDoneRemoteAuth, uint32(id))
		}
	}
	b, err := ae.Encode()
	if err != nil {
		return genetlink.Message{}, fmt.Errorf("handshake done: encode: %w", err)
	}
	return genetlink.Message{
		Header: genetlink.Header{Command: cmdDone, Version: familyVersion},
		Data:   b,
	}, nil
}

// isReady reports whether m is a READY notification for the tlshd class.
func isReady(m genetlink.Message) bool {
	if m.Header.Command != cmdReady {
		return false
	}
	ad, err := netlink.NewAttributeDecoder(m.Data)
	if err != nil {
		return false
	}
	for ad.Next() {
		if ad.Type() == attrAcceptHandlerClass {
			return ad.Uint32() == handlerClassTLSHD
		}
	}
	return false
}

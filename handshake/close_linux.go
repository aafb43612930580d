package handshake

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// explain turns a socket error into the close that ended the connection,
// the peer's or our kernel's, where there was one.
func (s *Session) explain(err error) error {
	return explainClose(err, s.sock.HungUp, s.closeInfo, s.closeMarker)
}

// markClose gives the kernel's close record of the connection a phrase of
// this handshake's own (CloseMarker), so that explain can tell who closed:
// the kernel's record holds the close the peer sent (its code, frame type
// and phrase, the marker gone) or the one the kernel sent itself (its code
// and frame type, our phrase kept), and says nothing else of its side. A
// CONNECTION_CLOSE the kernel sends during the handshake carries the
// phrase, and so does one it sends later for a protocol error of the
// peer's: the phrase says to the peer's logs what it is (CloseMarkerPrefix,
// then the connection's random tag and ")"). Without it (the option
// failed) explain cannot tell.
func (s *Session) markClose() {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return
	}
	m := CloseMarkerPrefix + hex.EncodeToString(b[:]) + ")"
	if s.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, quicabi.ConnectionClose{Phrase: m}.Marshal()) == nil {
		s.closeMarker = m
	}
}

// CloseMarker is the phrase the handshake gave the kernel's close record
// of the connection (QUIC_SOCKOPT_CONNECTION_CLOSE), "" if none, and the
// record keeps it until a close replaces it: a record that holds it is our
// kernel's own close (its code and frame type; all zero: its idle timer or
// a stateless reset), one that does not the peer's. Setting the option
// replaces it; a close with the default code and reason (nothing set)
// sends it as its reason phrase. kquic sets the option at every close;
// [Session.ClearCloseMarker] clears it.
func (s *Session) CloseMarker() string { return s.closeMarker }

// ClearCloseMarker clears the phrase of [Session.CloseMarker] from the
// kernel's close record, if it holds it still, so that a close with the
// default code and reason does not send it. A peer's close the kernel
// records between the check and the clearing is lost: call it before the
// peer can close, or where its record does not matter.
func (s *Session) ClearCloseMarker() {
	if s.closeMarker == "" {
		return
	}
	if cc, ok := s.closeInfo(); ok && cc.Phrase == s.closeMarker {
		s.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, quicabi.ConnectionClose{ErrCode: cc.ErrCode}.Marshal())
	}
	s.closeMarker = ""
}

// closeInfo reads the close the kernel recorded for the connection (the
// peer's CONNECTION_CLOSE, or the kernel's own; see markClose).
func (s *Session) closeInfo() (quicabi.ConnectionClose, bool) {
	b, err := s.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_CLOSE, make([]byte, quicabi.SizeofConnectionClose))
	if err != nil {
		return quicabi.ConnectionClose{}, false
	}
	cc, err := quicabi.UnmarshalConnectionClose(b)
	return cc, err == nil
}

// explainClose turns err into a [PeerClosedError] or a [LocalCloseError]
// when the connection has closed: the kernel says so with ENOTCONN, EPIPE
// or ECONNRESET, but with EINVAL for the calls that only an establishing
// socket takes (installing a secret, reading or setting the transport
// parameters), so after an EINVAL it asks hungUp whether the socket has
// closed (poll reports POLLHUP). closeInfo gives the close the kernel
// recorded; a record whose phrase is still marker (markClose; "" for none)
// is the kernel's own close, any other the peer's.
func explainClose(err error, hungUp func() bool, closeInfo func() (quicabi.ConnectionClose, bool), marker string) error {
	switch {
	case errors.Is(err, unix.ENOTCONN), errors.Is(err, unix.EPIPE), errors.Is(err, unix.ECONNRESET):
	case errors.Is(err, unix.EINVAL) && hungUp():
		err = fmt.Errorf("the socket is no longer establishing, the connection has closed: %w", err)
	default:
		return err
	}
	cc, ok := closeInfo()
	if !ok {
		return err
	}
	if marker != "" && cc.Phrase == marker {
		return fmt.Errorf("%w (%w)", &LocalCloseError{Code: cc.ErrCode, Frame: cc.Frame}, err)
	}
	return fmt.Errorf("%w (%w)", &PeerClosedError{Code: cc.ErrCode, Frame: cc.Frame, Phrase: cc.Phrase}, err)
}

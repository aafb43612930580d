package http3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go/quicvarint"

	"kquic.dev/quicnet"
)

// conn is what the two sides of an HTTP/3 connection share: the control
// stream this side opened, and the unidirectional streams the peer opens
// (its control stream, with its SETTINGS and GOAWAY, and its QPACK
// streams).
type conn struct {
	qc     *quicnet.Conn
	server bool
	logger *slog.Logger

	// maxHeader bounds the field sections this side decodes (it is the
	// SETTINGS_MAX_FIELD_SECTION_SIZE this side sent).
	maxHeader uint64

	controlMu sync.Mutex
	control   *quicnet.SendStream

	peer         atomic.Pointer[settings]
	peerSettings chan struct{} // closed once the peer's SETTINGS arrived
	peerPublic   *Settings     // the peer's settings, set before peerSettings closes

	// datagrams says this side sent SETTINGS_H3_DATAGRAM 1, and
	// remoteDatagrams that the peer's transport parameters allow QUIC
	// datagrams.
	datagrams, remoteDatagrams bool

	gotControl, gotEncoder, gotDecoder atomic.Bool

	// onGoAway is called with a GOAWAY's ID, in order (a client's
	// connection pool stops using the connection).
	onGoAway   func(id uint64)
	goAwayMu   sync.Mutex
	lastGoAway uint64
	hadGoAway  bool
}

// newConn opens this side's control stream and sends its SETTINGS
// (local: MaxFieldSectionSize is also the limit of the field sections this
// side decodes), and starts reading the peer's unidirectional streams.
func newConn(qc *quicnet.Conn, server bool, local settings, logger *slog.Logger, onGoAway func(uint64)) (*conn, error) {
	cs := qc.ConnectionState()
	if local.Datagram && !cs.SupportsDatagrams.Local {
		return nil, errors.New("http3: EnableDatagrams, but the QUIC connection has no datagrams: set quicnet.Config.EnableDatagrams where it is dialed or listened for")
	}
	c := &conn{qc: qc, server: server, logger: logger, maxHeader: local.MaxFieldSectionSize, peerSettings: make(chan struct{}), onGoAway: onGoAway,
		datagrams: local.Datagram, remoteDatagrams: cs.SupportsDatagrams.Remote}
	s, err := qc.OpenUniStream()
	if err != nil {
		return nil, fmt.Errorf("http3: open the control stream: %w", wrapError(err))
	}
	c.control = s
	b := quicvarint.Append(nil, streamControl)
	b = appendSettings(b, local)
	if _, err := s.Write(b); err != nil {
		return nil, fmt.Errorf("http3: send SETTINGS: %w", wrapError(err))
	}
	go c.acceptUniStreams()
	return c, nil
}

// settingsReceived and peerSettingsPublic are Settingser's.
func (c *conn) settingsReceived() <-chan struct{} { return c.peerSettings }

func (c *conn) peerSettingsPublic() *Settings {
	select {
	case <-c.peerSettings:
		return c.peerPublic
	default:
		return nil
	}
}

// close ends the connection with an HTTP/3 code.
func (c *conn) close(code ErrCode, msg string) {
	c.qc.CloseWithError(quicnet.ApplicationErrorCode(code), msg)
}

// fail acts on a protocol error: a connection error closes the connection
// and a stream error resets s (when given). It returns the error callers
// see (an *Error for both).
func (c *conn) fail(err error, s *quicnet.Stream) error {
	var ce *connError
	var se *streamError
	switch {
	case errors.As(err, &ce):
		c.close(ce.Code, ce.Msg)
		return &Error{ErrorCode: ce.Code, ErrorMessage: ce.Msg, err: err}
	case errors.As(err, &se):
		if s != nil {
			s.CancelRead(quicnet.StreamErrorCode(se.Code))
			s.CancelWrite(quicnet.StreamErrorCode(se.Code))
		}
		return &Error{ErrorCode: se.Code, ErrorMessage: se.Msg, err: err}
	}
	return wrapError(err)
}

// peerMaxHeader is the peer's field section limit (0: none, or not known
// yet).
func (c *conn) peerMaxHeader() uint64 {
	if s := c.peer.Load(); s != nil {
		return s.MaxFieldSectionSize
	}
	return 0
}

// checkPeerLimit checks a field section of size bytes against the peer's
// SETTINGS_MAX_FIELD_SECTION_SIZE. A section larger than any peer
// should refuse (waitSettingsAbove) waits for the peer's SETTINGS first,
// so the limit applies from the first message on.
func (c *conn) checkPeerLimit(ctx context.Context, size uint64) error {
	if size > waitSettingsAbove && c.peer.Load() == nil {
		select {
		case <-c.peerSettings:
		case <-c.qc.Context().Done():
			return wrapError(context.Cause(c.qc.Context()))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if max := c.peerMaxHeader(); max > 0 && size > max {
		return fmt.Errorf("http3: a field section of %d bytes, more than the peer's SETTINGS_MAX_FIELD_SECTION_SIZE of %d", size, max)
	}
	return nil
}

// waitSettingsAbove is the field section size up to which a message goes
// out before the peer's SETTINGS arrived (RFC 9114 §7.2.4.2 lets a side
// send before); no common limit is below it.
const waitSettingsAbove = 16 << 10

// sendGoAway sends a GOAWAY frame on the control stream.
func (c *conn) sendGoAway(id uint64) error {
	c.controlMu.Lock()
	defer c.controlMu.Unlock()
	_, err := c.control.Write(appendGoAway(nil, id))
	return wrapError(err)
}

func (c *conn) acceptUniStreams() {
	for {
		s, err := c.qc.AcceptUniStream(context.Background())
		if err != nil {
			return // the connection ended
		}
		go c.handleUniStream(s)
	}
}

// handleUniStream reads a unidirectional stream's type and serves it as
// RFC 9114 §6.2 says.
func (c *conn) handleUniStream(s *quicnet.ReceiveStream) {
	br := bufio.NewReaderSize(s, 256)
	typ, err := quicvarint.Read(br)
	if err != nil {
		return // reset or ended before its type: nothing to do
	}
	switch typ {
	case streamControl:
		if c.gotControl.Swap(true) {
			c.close(ErrCodeStreamCreationError, "a second control stream")
			return
		}
		c.fail(c.readControl(br), nil)
	case streamQPACKEncoder, streamQPACKDecoder:
		seen := &c.gotEncoder
		if typ == streamQPACKDecoder {
			seen = &c.gotDecoder
		}
		if seen.Swap(true) {
			c.close(ErrCodeStreamCreationError, "a second QPACK stream of one type")
			return
		}
		// This side announced no dynamic table (capacity 0), so the
		// peer's instructions have nothing to act on: read and drop
		// them, keeping nothing. The stream must stay open.
		if _, err := io.Copy(io.Discard, br); err == nil {
			c.close(ErrCodeClosedCriticalStream, "the peer closed a QPACK stream")
		}
	case streamPush:
		if c.server {
			c.close(ErrCodeStreamCreationError, "a client opened a push stream")
		} else {
			c.close(ErrCodeIDError, "a push stream, though this client allowed no push")
		}
	default:
		// Unknown and reserved types are ignored (RFC 9114 §6.2).
		s.CancelRead(quicnet.StreamErrorCode(ErrCodeStreamCreationError))
	}
}

// readControl reads the peer's control stream: SETTINGS first, then
// GOAWAY, MAX_PUSH_ID, CANCEL_PUSH and unknown frames. It returns the
// protocol error that ends the connection, or nil once the connection
// ended.
func (c *conn) readControl(br *bufio.Reader) error {
	fh, err := readFrameHeader(br)
	if err != nil {
		return controlEnded(err)
	}
	if fh.Type != frameSettings {
		return &connError{Code: ErrCodeMissingSettings, Msg: fmt.Sprintf("the control stream began with frame type %#x, not SETTINGS", fh.Type)}
	}
	if fh.Length > maxControlFrame {
		return &connError{Code: ErrCodeExcessiveLoad, Msg: fmt.Sprintf("SETTINGS frame of %d bytes", fh.Length)}
	}
	p, err := readPayload(br, fh.Length, nil)
	if err != nil {
		return controlEnded(err)
	}
	s, err := parseSettings(p)
	if err != nil {
		return err
	}
	if s.Datagram && c.datagrams && !c.remoteDatagrams {
		// RFC 9297 §2.1.1. Checked only when this side enabled HTTP
		// datagrams, as quic-go does: its client sends the setting
		// whatever the server's transport parameters.
		return &connError{Code: ErrCodeSettingsError, Msg: "SETTINGS_H3_DATAGRAM 1 without QUIC datagrams"}
	}
	c.peer.Store(&s)
	c.peerPublic = &Settings{EnableDatagrams: s.Datagram, EnableExtendedConnect: s.ExtendedConnect, Other: s.Other}
	close(c.peerSettings)
	for {
		fh, err := readFrameHeader(br)
		if err != nil {
			return controlEnded(err)
		}
		switch {
		case fh.Type == frameGoAway, fh.Type == frameMaxPushID, fh.Type == frameCancelPush:
			if fh.Length > maxControlFrame {
				return &connError{Code: ErrCodeExcessiveLoad, Msg: fmt.Sprintf("frame of type %#x of %d bytes", fh.Type, fh.Length)}
			}
			p, err := readPayload(br, fh.Length, nil)
			if err != nil {
				return controlEnded(err)
			}
			if err := c.controlFrame(fh.Type, p); err != nil {
				return err
			}
		case fh.Type == frameSettings:
			return &connError{Code: ErrCodeFrameUnexpected, Msg: "a second SETTINGS frame"}
		case fh.Type == frameData, fh.Type == frameHeaders, fh.Type == framePushPromise, isHTTP2Frame(fh.Type):
			return &connError{Code: ErrCodeFrameUnexpected, Msg: fmt.Sprintf("frame type %#x on the control stream", fh.Type)}
		default:
			if err := skipPayload(br, fh.Length); err != nil {
				return controlEnded(err)
			}
		}
	}
}

// controlFrame acts on a GOAWAY, MAX_PUSH_ID or CANCEL_PUSH frame.
func (c *conn) controlFrame(typ uint64, p []byte) error {
	id, err := parseGoAway(p) // all three carry one varint
	if err != nil {
		return err
	}
	switch typ {
	case frameMaxPushID:
		if !c.server {
			return &connError{Code: ErrCodeFrameUnexpected, Msg: "MAX_PUSH_ID from a server"}
		}
		return nil // this server does not push
	case frameCancelPush:
		return nil // no push was promised or allowed
	}
	c.goAwayMu.Lock()
	defer c.goAwayMu.Unlock()
	if !c.server && id%4 != 0 {
		return &connError{Code: ErrCodeIDError, Msg: fmt.Sprintf("GOAWAY with stream ID %d, not a client-initiated bidirectional stream", id)}
	}
	if c.hadGoAway && id > c.lastGoAway {
		return &connError{Code: ErrCodeIDError, Msg: fmt.Sprintf("GOAWAY ID grew from %d to %d", c.lastGoAway, id)}
	}
	c.hadGoAway, c.lastGoAway = true, id
	if c.onGoAway != nil {
		c.onGoAway(id)
	}
	return nil
}

// controlEnded turns the end of a critical stream into
// H3_CLOSED_CRITICAL_STREAM; an error (the connection closed) stays
// quiet.
func controlEnded(err error) error {
	if err == io.EOF || errors.Is(err, errTruncated) {
		return &connError{Code: ErrCodeClosedCriticalStream, Msg: "the peer closed its control stream"}
	}
	return nil
}

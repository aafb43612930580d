package quicnet

// The streams of a connection, holding an implementation's as the
// connection does (see quicnet.go).

import (
	"io"
	"time"
)

// Stream is a bidirectional stream: an io.ReadWriteCloser whose Close ends
// the sending side (FIN). Read and Write may be called concurrently with
// each other.
type Stream struct {
	impl streamImpl
}

// StreamID returns the stream's ID.
func (s *Stream) StreamID() StreamID { return s.impl.streamID() }

// Read reads data. It returns io.EOF after the peer's FIN, and a
// *[StreamError] after the peer reset the stream or this side canceled
// reading.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.impl.read(p)
	if err != nil && err != io.EOF {
		err = convertError(err)
	}
	return n, err
}

// Write writes data, waiting while flow control holds it back. It returns
// a *[StreamError] after the peer asked to stop sending or this side
// canceled writing.
func (s *Stream) Write(p []byte) (int, error) {
	n, err := s.impl.write(p)
	if err != nil {
		err = convertError(err)
	}
	return n, err
}

// Close ends the sending side: the peer reads io.EOF after the data
// written. Reading goes on.
func (s *Stream) Close() error { return convertError(s.impl.close()) }

// WriteAndClose is Write(p) then Close, in one step where the transport
// has one: kernel QUIC sends p and the FIN in one sendmsg, so a p that
// fits a packet leaves as one STREAM frame with the FIN rather than a
// packet and a FIN-only packet after it (each write leaves at once, as
// quicnet turns on stream_data_nodelay). quic-go coalesces on its own.
func (s *Stream) WriteAndClose(p []byte) (int, error) {
	n, err := s.impl.writeAndClose(p)
	if err != nil {
		err = convertError(err)
	}
	return n, err
}

// CancelRead asks the peer to stop sending (STOP_SENDING with code) and
// discards what arrives; Read then returns a *[StreamError]. After the
// whole stream was read it does nothing. Kernel QUIC takes codes of up to
// 32 bits; a larger one is an error.
func (s *Stream) CancelRead(code StreamErrorCode) error {
	return convertError(s.impl.cancelRead(code))
}

// CancelWrite abandons sending (RESET_STREAM with code): the peer's Read
// returns a *[StreamError]. After all data was sent and acknowledged it
// does nothing. Kernel QUIC takes codes of up to 32 bits; a larger one is
// an error.
func (s *Stream) CancelWrite(code StreamErrorCode) error {
	return convertError(s.impl.cancelWrite(code))
}

// SetDeadline sets the read and write deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.impl.setReadDeadline(t)
	return s.impl.setWriteDeadline(t)
}

// SetReadDeadline makes a waiting or later Read fail with an error matching
// os.ErrDeadlineExceeded once t passes (zero: no deadline).
func (s *Stream) SetReadDeadline(t time.Time) error { return s.impl.setReadDeadline(t) }

// SetWriteDeadline does the same for Write.
func (s *Stream) SetWriteDeadline(t time.Time) error { return s.impl.setWriteDeadline(t) }

// ReceiveStream is the receiving end of a unidirectional stream the peer
// opened.
type ReceiveStream struct {
	impl recvStreamImpl
}

// StreamID returns the stream's ID.
func (s *ReceiveStream) StreamID() StreamID { return s.impl.streamID() }

// Read reads data (see [Stream.Read]).
func (s *ReceiveStream) Read(p []byte) (int, error) {
	n, err := s.impl.read(p)
	if err != nil && err != io.EOF {
		err = convertError(err)
	}
	return n, err
}

// CancelRead asks the peer to stop sending (see [Stream.CancelRead]).
func (s *ReceiveStream) CancelRead(code StreamErrorCode) error {
	return convertError(s.impl.cancelRead(code))
}

// SetReadDeadline sets the read deadline (see [Stream.SetReadDeadline]).
func (s *ReceiveStream) SetReadDeadline(t time.Time) error { return s.impl.setReadDeadline(t) }

// SendStream is the sending end of a unidirectional stream this side
// opened.
type SendStream struct {
	impl sendStreamImpl
}

// StreamID returns the stream's ID.
func (s *SendStream) StreamID() StreamID { return s.impl.streamID() }

// Write writes data (see [Stream.Write]).
func (s *SendStream) Write(p []byte) (int, error) {
	n, err := s.impl.write(p)
	if err != nil {
		err = convertError(err)
	}
	return n, err
}

// Close ends the stream (FIN).
func (s *SendStream) Close() error { return convertError(s.impl.close()) }

// CancelWrite abandons sending (see [Stream.CancelWrite]).
func (s *SendStream) CancelWrite(code StreamErrorCode) error {
	return convertError(s.impl.cancelWrite(code))
}

// SetWriteDeadline sets the write deadline (see [Stream.SetWriteDeadline]).
func (s *SendStream) SetWriteDeadline(t time.Time) error { return s.impl.setWriteDeadline(t) }

var (
	_ io.ReadWriteCloser = (*Stream)(nil)
	_ io.Reader          = (*ReceiveStream)(nil)
	_ io.WriteCloser     = (*SendStream)(nil)
)

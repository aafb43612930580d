package quicabi

import "golang.org/x/sys/unix"

// Message flags. The kernel reuses existing MSG_* bits, so these are aliases
// of the unix.MSG_* values named in the comments. The MSG_QUIC_STREAM_* flags
// go in StreamInfo.Flags (or in the sendmsg flags when no QUIC_STREAM_INFO
// control message is given); MSG_QUIC_DATAGRAM and MSG_QUIC_NOTIFICATION are
// sendmsg/recvmsg flags.
const (
	// MSG_QUIC_STREAM_NEW (MSG_SYN) opens the stream with this send.
	MSG_QUIC_STREAM_NEW = unix.MSG_SYN
	// MSG_QUIC_STREAM_FIN (MSG_FIN) marks the last data of a stream, on send
	// and on receive.
	MSG_QUIC_STREAM_FIN = unix.MSG_FIN
	// MSG_QUIC_STREAM_UNI (MSG_CONFIRM) asks for the next unidirectional
	// stream instead of a bidirectional one when the stream ID is -1.
	MSG_QUIC_STREAM_UNI = unix.MSG_CONFIRM
	// MSG_QUIC_STREAM_DONTWAIT (MSG_WAITFORONE) makes opening a stream beyond
	// the peer's limit fail with EAGAIN instead of blocking.
	MSG_QUIC_STREAM_DONTWAIT = unix.MSG_WAITFORONE
	// MSG_QUIC_STREAM_SNDBLOCK (MSG_ERRQUEUE) makes a blocked send also send
	// a STREAMS_BLOCKED / DATA_BLOCKED / STREAM_DATA_BLOCKED frame.
	MSG_QUIC_STREAM_SNDBLOCK = unix.MSG_ERRQUEUE
	// MSG_QUIC_DATAGRAM (MSG_RST) sends an RFC 9221 DATAGRAM; on receive it
	// marks the message as one.
	MSG_QUIC_DATAGRAM = unix.MSG_RST
	// MSG_QUIC_NOTIFICATION (MSG_MORE), set in the received msg_flags, marks
	// the message as an event notification (see DecodeEvent).
	MSG_QUIC_NOTIFICATION = unix.MSG_MORE
)

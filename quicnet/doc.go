// Package quicnet lets a Go QUIC server or client run over either quic-go
// (userspace, any OS) or the Linux kernel's QUIC module (IPPROTO_QUIC
// sockets, through kquic.dev/kquic) without changing its code, and on
// Linux one binary has both: each [Listen], [ListenEarly] and [Dial]
// chooses by [Config].Implementation, whose default, [Auto], takes kernel
// QUIC where the kernel opens an IPPROTO_QUIC socket and quic-go
// otherwise. [Listener.Implementation] and [Conn.Implementation] say which
// was chosen, Auto's first choice in a process is logged (log/slog, Info),
// and operators override Auto with $QUICNET_IMPLEMENTATION
// ([ImplementationEnv]: kquic, quic-go, auto).
//
//	go build ./...                 # both (Linux); quic-go elsewhere
//	go build -tags kquic ./...     # kernel QUIC alone, no quic-go linked
//	go build -tags nokquic ./...   # quic-go alone
//
// The API follows quic-go's names and shapes ([Listen]/[ListenAddr],
// [Listener.Accept], [Dial]/[DialAddr], [Conn.AcceptStream],
// [Conn.OpenStreamSync], [Conn.SendDatagram], [Conn.CloseWithError],
// [Stream], [ReceiveStream], [SendStream]), so porting a quic-go program is
// mostly a matter of replacing the import and the *quic.X types with
// *quicnet.X. [Implementation] says what Auto chooses here,
// [Implementations] what is built in.
//
// [ListenEarly] is quic-go's: its [EarlyListener] hands out connections
// before their handshake completes ([Conn.HandshakeComplete]), so that a
// server answers a client's 0-RTT request in its first flight; on kernel
// QUIC it waits for the handshake, as the module holds 0-RTT data until
// then.
//
// [DialEarly] sends its first stream's data in 0-RTT when the session cache
// holds a ticket of a server with [Config.Allow0RTT];
// [ConnectionState].Used0RTT says whether it was taken.
//
// A [Config] holds the settings both implementations have. Errors are the
// same types on both: *[ApplicationError], *[TransportError],
// *[IdleTimeoutError], *[HandshakeTimeoutError], *[StreamError],
// *[StreamLimitReachedError], *[DatagramTooLargeError], with the
// implementation's own error reachable with errors.As or Unwrap. Every error
// that says a connection or listener has ended matches net.ErrClosed with
// errors.Is.
//
// Where the two differ (the kernel's limits on codes, reasons and timers,
// what a kernel QUIC listener does with a client whose ALPN it does not
// serve), the documentation of the method or field says so; the package's
// conformance tests pin every difference.
package quicnet

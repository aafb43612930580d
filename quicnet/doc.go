// Package quicnet lets a Go QUIC server or client run over either quic-go
// (userspace, any OS) or the Linux kernel's QUIC module (IPPROTO_QUIC
// sockets, through kquic.dev/kquic) without changing its code: the build
// chooses.
//
//	go build ./...                 # quic-go
//	go build -tags kquic ./...     # kernel QUIC on Linux (quic-go elsewhere)
//
// The API follows quic-go's names and shapes ([Listen]/[ListenAddr],
// [Listener.Accept], [Dial]/[DialAddr], [Conn.AcceptStream],
// [Conn.OpenStreamSync], [Conn.SendDatagram], [Conn.CloseWithError],
// [Stream], [ReceiveStream], [SendStream]), so porting a quic-go program is
// mostly a matter of replacing the import and the *quic.X types with
// *quicnet.X. [Implementation] says which implementation is compiled in.
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

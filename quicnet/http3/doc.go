// Package http3 is HTTP/3 (RFC 9114) over package quicnet: a Server that
// serves any http.Handler and a Transport (an http.RoundTripper) for
// http.Client, so the same binary runs over the Linux kernel's QUIC module
// where it is loaded and over quic-go elsewhere (quicnet's Auto; see
// quicnet.Config.Implementation).
//
//	srv := &http3.Server{Addr: ":443", Handler: mux, TLSConfig: tlsConf}
//	log.Fatal(srv.ListenAndServe())
//
//	client := &http.Client{Transport: &http3.Transport{}}
//	resp, err := client.Get("https://example.com/")
//
// Both sides send SETTINGS on a control stream and honour the peer's
// SETTINGS_MAX_FIELD_SECTION_SIZE; field sections are QPACK-encoded with
// github.com/quic-go/qpack, with the static table only (this side declares
// no dynamic table, so the peer's QPACK streams carry nothing to act on).
// Unknown frame types, stream types and settings are ignored, as the RFC
// says; a protocol violation closes the connection, and a malformed
// message resets its stream, with the RFC's code (an [ErrCode]); the peer
// sees an [*Error].
//
// Limits a peer cannot raise: a request's field section is bounded by
// Server.MaxHeaderBytes (a larger one gets 431), the requests a
// connection has in flight by the QUIC stream limit
// (quicnet.Config.MaxIncomingStreams), a response waits in per-stream flow
// control for a client that does not read (Server.WriteTimeout ends it),
// and Server.ReadHeaderTimeout and Server.IdleTimeout bound slow and idle
// clients as http.Server's do.
//
// With a session cache (TLSClientConfig.ClientSessionCache), the request
// that opens a connection goes in 0-RTT when it is safe (GET, HEAD,
// OPTIONS, TRACE without a body) and the server allows it
// (quicnet.Config.Allow0RTT); Transport.Disable0RTT turns it off.
//
// The names and shapes are quic-go's http3 package's, so that a quic-go
// program ports by its imports (github.com/quic-go/quic-go becomes
// kquic.dev/quicnet, its http3 this package): docs/http3.md has the table
// of the two APIs, each difference with its reason.
//
// Server push, extended CONNECT, a per-request HTTP datagram API,
// priorities and the QPACK dynamic table are not implemented; see
// docs/http3.md.
package http3

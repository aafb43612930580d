// Package web is the engine of the web workloads: one http.Handler serving
// the resources a benchmark fetches, servers of it over each transport
// behind one interface, and client workloads over any http.RoundTripper.
//
// The handler (NewHandler) serves
//
//	GET  /bytes/N          N bytes of the content, streamed
//	GET  /obj/N            N bytes of the content (N <= MaxObject), from memory
//	GET  /page?k=K&size=S  an HTML page naming K sub-resources /obj/S?r=i
//	POST /sink             reads the body; answers its byte count and CRC-32C (JSON)
//
// The content is deterministic (a pseudo-random 16 KiB block from a fixed
// seed, each block stamped with its index), so a client checks every byte it
// receives against the content at that offset (Checker) and names the first
// that differs; an upload is checked by the server's CRC-32C of what it read
// against the client's of what it sent. CRC-32C rather than a cryptographic
// hash because the check must not be the bottleneck of the goodput it checks.
//
// Servers: ServeH2TLS (net/http as shipped, HTTP/2 over crypto/tls, ALPN h2),
// ServeH2KTLS (golang.org/x/net/http2 serving kernel TLS connections from
// package ktls), ServeH3QuicGo (quic-go's own http3) and NewHTTP3, the hook
// for any other HTTP/3 server (this project's HTTP/3 over quicnet). Each
// reports the HTTP-layer Settings in force.
//
// Clients (H2TLSClient, H2KTLSClient, H3QuicGoClient, or a Client filled by
// hand around any RoundTripper) make one fresh connection per RoundTripper.
// The workloads run on them: Download and Upload (goodput, body checked),
// Objects (N connections with M requests in flight each for a duration:
// requests per second and an HDR latency histogram from bench/latency), Page
// (one HTML then its K sub-resources at once: time to last byte) and Setup
// (time to first byte of a fresh connection: full handshake, resumed, and
// 0-RTT where the transport has them). Every Result carries both ends'
// Settings, bytes, seconds and every failed request counted by kind.
package web

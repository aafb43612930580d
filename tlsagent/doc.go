// Package tlsagent is a handshake agent for kernel TLS consumers: it serves
// the kernel's "handshake" generic netlink family (net/handshake), as tlshd
// from ktls-utils does, so that in-kernel users of QUIC sockets (SMB and NFS
// over QUIC, the QUIC module's sample consumer) and of TCP sockets (NFS with
// xprtsec=tls) get their TLS 1.3 handshakes done in userspace.
//
// The agent joins the family's "tlshd" multicast group; for each READY
// notification it takes the request with HANDSHAKE_CMD_ACCEPT, which installs
// the consumer's socket in this process, runs the handshake on that socket
// (a QUIC socket with package handshake; a TCP socket with crypto/tls, the
// keys then handed to the kernel with package ktls), and reports the result
// with HANDSHAKE_CMD_DONE: an errno-style status and the key serials of the
// peer's identity.
//
// Certificates, keys and trust anchors come from a tlshd-style configuration
// file (see [ParseConfig]) or from the key serials the consumer passes;
// certificate verification is on unless the consumer asks for an
// unauthenticated handshake.
//
//	cfg, err := tlsagent.LoadConfig("/etc/tlshd/config")
//	...
//	a := &tlsagent.Agent{Config: cfg, Log: slog.Default()}
//	err = a.Serve(ctx) // until ctx ends: then requests in flight are answered
package tlsagent

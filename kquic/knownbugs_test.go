//go:build linux

package kquic_test

import "kquic.dev/internal/testenv"

// The module's bugs that tests reproduce, with the builds they were seen on
// (testenv.ModuleBuilds: the loaded module's GNU build ID, the lxin/quic
// commit of the git checkout quic.ko was built in, or the code of quic.ko,
// kmod.CodeHash). lxin/quic 03a9c7cdb2d5 built against Debian's
// 7.3.4+deb13-amd64 headers with gcc-14 is code:b90fe60c… wherever it was
// built (a checkout or an exported tree without .git; two folders gave build
// IDs 6b4bb0b3… and 53e5bfd4… for one code hash); build ID 0b7ae3ea… is one
// such build. A build listed here that no longer shows a deterministic bug
// fails its test, and so does a build not listed that shows one.
// build03a9c7c is lxin/quic 03a9c7cdb2d5 built for Debian's 7.3.4+deb13-amd64
// with gcc-14, by its code.
const build03a9c7c = "code:b90fe60cc0a8480fbe5fc55f33e6013e"

var (
	// bugStalePTO: see stalepto_test.go for the mechanism.
	bugStalePTO = testenv.KnownModuleBug{
		What:   "a loss timer that fired while the socket was owned runs its PTO after the flight was acknowledged, probes the Handshake space after the handshake, and the probe, which a peer that dropped its Handshake keys (quic-go) never acknowledges, stays in flight for good: Nagle then holds small writes and the congestion window fills",
		SeenOn: []string{"build-id:0b7ae3ea4e929003c3b78d43dc501d9a52ba2d2e", "lxin/quic@03a9c7cdb2d5", build03a9c7c},
	}
	bugStopSendingBeforeData = testenv.KnownModuleBug{
		What:   "the server closes the connection with STREAM_STATE_ERROR for a STOP_SENDING on a client stream whose data it has not seen yet (RFC 9000 §3.2 says to open the stream)",
		SeenOn: []string{"lxin/quic@03a9c7cdb2d5", build03a9c7c},
	}
	bugStaleCredit = testenv.KnownModuleBug{
		What:   "a window update's MAX_DATA or MAX_STREAM_DATA frame is built before the limit is raised, so it carries the previous limit; a receiver that consumes a whole window in one recvmsg sends only a stale update and the transfer deadlocks until the idle timeout",
		SeenOn: []string{"lxin/quic@03a9c7cdb2d5", build03a9c7c},
	}
	// bugLargeFirstInitial: a kernel client dialing quic-go over loopback
	// got no answer (TestInteropQuicGoServerLoopback/uncapped has the
	// reproducer); Config.InitialMaxUDPPayload, which quicnet sets, is the
	// workaround (TestInteropQuicGoServerLoopback/capped).
	bugLargeFirstInitial = testenv.KnownModuleBug{
		What:   "the client's first Initial datagram takes the path MTU (Go's whole ClientHello in one datagram on loopback, 1568-1624 bytes), over the 1452 bytes quic-go reads of a datagram and the 1200 that RFC 9000 §14 has a client send before it knows the path: quic-go reads it cut short, cannot parse it, and never answers",
		SeenOn: []string{"lxin/quic@03a9c7cdb2d5", build03a9c7c},
	}
	// bugEarlyStreamID: TestModuleBugEarlyStreamID. The server's transport
	// parameters go through quic_stream_set_param, which sets
	// next_bidi_stream_id back to 0 although stream 0 was opened for 0-RTT.
	bugEarlyStreamID = testenv.KnownModuleBug{
		What:   "after 0-RTT data on stream 0, the server's transport parameters reset the client's next stream ID to 0: while stream 0 is open QUIC_SOCKOPT_STREAM_OPEN hands out 0 again and fails with EINVAL, and once stream 0 is released it opens a second stream 0; a STREAM frame for stream 0 that arrives after its release, before that second stream 0 (a retransmission), counts as one for a stream not yet opened, and the kernel closes the connection with STREAM_STATE_ERROR",
		SeenOn: []string{"lxin/quic@03a9c7cdb2d5", build03a9c7c},
	}
	bugALPNSecondInitial = testenv.KnownModuleBug{
		What:   "with several ALPN listeners on a port, a ClientHello in two Initial packets is dispatched by its first packet only, and the second goes to an arbitrary listener",
		SeenOn: []string{"lxin/quic@03a9c7cdb2d5", build03a9c7c},
		Flaky:  true,
	}
)

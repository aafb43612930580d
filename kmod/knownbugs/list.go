package knownbugs

// Build03a9c7c is lxin/quic 03a9c7cdb2d5 built for Debian's
// 7.3.4+deb13-amd64 with gcc-14, by its code (kmod.CodeHash): the same
// wherever it was built, a checkout or an exported tree without .git (two
// folders gave build IDs 6b4bb0b3… and 53e5bfd4… for this one code hash;
// build ID 0b7ae3ea… is one such build).
const Build03a9c7c = "code:b90fe60cc0a8480fbe5fc55f33e6013e"

// Commit03a9c7c is the same source by its commit, where quic.ko lies in a
// git checkout of lxin/quic.
const Commit03a9c7c = "lxin/quic@03a9c7cdb2d5"

// The known bugs. A build listed here that no longer shows a deterministic
// bug fails its reproducer, and so does a build not listed that shows one.
var (
	// StalePTO: kquic/stalepto_test.go has the mechanism.
	StalePTO = Bug{
		ID:     "stale-pto",
		What:   "a loss timer that fired while the socket was owned runs its PTO after the flight was acknowledged, probes the Handshake space after the handshake, and the probe, which a peer that dropped its Handshake keys (quic-go) never acknowledges, stays in flight for good: Nagle then holds small writes and the congestion window fills",
		SeenOn: []string{"build-id:0b7ae3ea4e929003c3b78d43dc501d9a52ba2d2e", Commit03a9c7c, Build03a9c7c},
		Test:   "kquic.TestModuleStalePTO",
	}
	StopSendingBeforeData = Bug{
		ID:     "stop-sending-before-data",
		What:   "the server closes the connection with STREAM_STATE_ERROR for a STOP_SENDING on a client stream whose data it has not seen yet (RFC 9000 §3.2 says to open the stream)",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Test:   "kquic.TestFuncStopSendingBeforeData",
	}
	StaleCredit = Bug{
		ID:     "stale-credit",
		What:   "a window update's MAX_DATA or MAX_STREAM_DATA frame is built before the limit is raised, so it carries the previous limit; a receiver that consumes a whole window in one recvmsg sends only a stale update and the transfer deadlocks until the idle timeout",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Test:   "kquic.TestModuleBugStaleCredit",
	}
	// LargeFirstInitial: a kernel client dialing quic-go over loopback got
	// no answer; kquic.Config.InitialMaxUDPPayload, which quicnet sets, is
	// the workaround.
	LargeFirstInitial = Bug{
		ID:     "large-first-initial",
		What:   "the client's first Initial datagram takes the path MTU (1624 bytes on loopback), over the 1452 bytes quic-go reads of a datagram: quic-go reads it cut short, cannot parse it, and never answers",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Test:   "kquic.TestInteropQuicGoServerLoopback",
		Interop: []Sign{
			// A ClientHello of two packets (Go's default key shares) in a
			// first datagram of 1581 bytes (kqbench interop, http3 over
			// quicnet, which does not ask for a compact one).
			{Kernel: "client", Peer: "quic-go", Reason: "no answer from the server to our ClientHello"},
		},
	}
	// EarlyStreamID: the server's transport parameters go through
	// quic_stream_set_param, which sets next_bidi_stream_id back to 0
	// although stream 0 was opened for 0-RTT.
	EarlyStreamID = Bug{
		ID:     "early-stream-id",
		What:   "after 0-RTT data on stream 0, the server's transport parameters reset the client's next stream ID to 0: while stream 0 is open QUIC_SOCKOPT_STREAM_OPEN hands out 0 again and fails with EINVAL, and once stream 0 is released it opens a second stream 0; a STREAM frame for stream 0 that arrives after its release, before that second stream 0 (a retransmission), counts as one for a stream not yet opened, and the kernel closes the connection with STREAM_STATE_ERROR",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Test:   "kquic.TestModuleBugEarlyStreamID",
		Interop: []Sign{
			{Cases: []string{"zerortt"}, Kernel: "client", Reason: "open stream: invalid argument"},
			{Cases: []string{"zerortt"}, Kernel: "client", Reason: "STREAM_STATE_ERROR"},
		},
	}
	ALPNSecondInitial = Bug{
		ID:     "alpn-second-initial",
		What:   "with several ALPN listeners on a port, a ClientHello in two Initial packets is dispatched by its first packet only, and the second goes to an arbitrary listener",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Flaky:  true,
		Test:   "kquic.TestALPNDispatchTwoPacketClientHello",
	}
	FreedAsDropped = Bug{
		ID:     "freed-as-dropped",
		What:   "every received packet whose data recvmsg copied is freed with kfree_skb in quic_frame_free (inlined in quic_frame_put), where consume_skb is meant: drop monitors and kfree_skb counters see one NOT_SPECIFIED drop per packet, though nothing is lost",
		SeenOn: []string{Commit03a9c7c, Build03a9c7c},
		Test:   "bench/counters.TestKernelQUICDropSites",
	}
)

// InitialAck: packet.c, quic_packet_handshake_process: "On server, don't
// arm ACK timer for Initial; next handshake msg can bundle the ACK".
var InitialAck = Bug{
	ID:     "initial-ack",
	What:   "once a server has sent its first flight, it acknowledges the client's retransmitted Initial packets only with its own next retransmission (its PTO, about 1 s, then doubling): it arms no ACK timer for Initial packets (RFC 9000 §13.2.1 wants each acknowledged at once), so when its first flight is lost the client hears nothing for a second or more, and a lossy handshake takes seconds: clients with a handshake timeout give up",
	SeenOn: []string{Commit03a9c7c, Build03a9c7c},
	Test:   "kquic.TestModuleBugInitialAck",
	Interop: []Sign{
		{Cases: lossyHandshakes, Kernel: "server", Reason: "no recent network activity"},         // quic-go's client
		{Cases: lossyHandshakes, Kernel: "server", Reason: "handshake did not complete in time"}, // kquic's
		{Cases: lossyHandshakes, Kernel: "server", Reason: "no answer from the server"},
		{Cases: lossyHandshakes, Kernel: "server", Reason: "ERR_HANDSHAKE_TIMEOUT"}, // ngtcp2's
	},
}

// PTOFirstInitial: outqueue.c, quic_outq_transmit_pto sends a single
// packet (quic_outq_transmit_single), and quic_outq_transmit_old fills it
// from the head of the transmitted list, which is the first Initial packet's
// CRYPTO frame each time.
var PTOFirstInitial = Bug{
	ID:     "pto-first-initial",
	What:   "a client's PTO probe carries only its first Initial packet's CRYPTO data, at every PTO: when a ClientHello of two packets (Go's default key shares in a 1200-byte first flight) loses its first flight, the rest is never sent again, a kernel server acknowledges none of the part it has (initial-ack), and the handshake never completes",
	SeenOn: []string{Commit03a9c7c, Build03a9c7c},
	Test:   "kquic.TestModuleBugPTOFirstInitial",
}

// LateMaxStreamData: stream.c, quic_stream_get refuses a send-side lookup
// of a stream the peer initiated (-EINVAL) before it asks whether the
// stream was closed (-ENOSTR, which quic_frame_stream_error ignores).
var LateMaxStreamData = Bug{
	ID:     "late-max-stream-data",
	What:   "a MAX_STREAM_DATA frame for a stream the peer opened that arrives after the kernel released the stream (its data read to the FIN, its answer acknowledged) closes the connection with STREAM_STATE_ERROR, where RFC 9000 asks for a frame of a closed stream to be ignored: a peer's window update that races its stream's end loses the connection",
	SeenOn: []string{Commit03a9c7c, Build03a9c7c},
	Test:   "kquic.TestModuleBugLateMaxStreamData",
	Interop: []Sign{
		// quic-go's client in the transfer case; the kernel log has the
		// close: "quic_frame_connection_close_create: level: 0, errcode:
		// 5, frame: 17" (STREAM_STATE_ERROR for MAX_STREAM_DATA, 0x11).
		{Kernel: "server", Log: "errcode: 5, frame: 17"},
	},
}

// lossyHandshakes are the interop cases that lose or corrupt handshake
// packets.
var lossyHandshakes = []string{"handshakeloss", "multiconnect", "handshakecorruption"}

// All is every known bug.
var All = []*Bug{&StalePTO, &StopSendingBeforeData, &StaleCredit, &LargeFirstInitial, &EarlyStreamID, &ALPNSecondInitial, &FreedAsDropped, &InitialAck, &PTOFirstInitial, &LateMaxStreamData}

package transport

// The QUIC module's default flow-control windows (protocol.c: 16 and 32
// times QUIC_PATH_MAX_PMTU, 65535), which kquic.Config's zero keeps.
const (
	kquicDefaultStreamWindow = 16 * 65535
	kquicDefaultConnWindow   = 32 * 65535
)

// FlowWindow is the flow-control window a QUIC transport's receiver grants
// with the options, per stream and per connection, in bytes, and how it is
// set; the TCP-based transports have none (0, 0): the kernel autotunes
// their receive window. A sender can have at most this much unacknowledged
// data in flight, so it caps goodput at window/RTT.
func FlowWindow(name string, o Options) (stream, conn int64, how string) {
	switch name {
	case "kquic":
		if o.Window > 0 {
			return int64(o.Window), int64(o.Window), "--window (max_stream_data, max_data)"
		}
		return kquicDefaultStreamWindow, kquicDefaultConnWindow, "the module's defaults (max_stream_data 1048560, max_data 2097120)"
	case "quic-go":
		if o.Window > 0 {
			return int64(o.Window), int64(o.Window), "--window (stream and connection receive windows)"
		}
		c := quicGoConf(o)
		return int64(c.MaxStreamReceiveWindow), int64(c.MaxConnectionReceiveWindow), "kqbench's quic-go config (autotuned up to MaxStreamReceiveWindow, MaxConnectionReceiveWindow)"
	}
	return 0, 0, ""
}

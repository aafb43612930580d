package transport

import "fmt"

// CongestionControls are the algorithms --cc may name. TCP and kTLS take
// any the kernel has (bbr needs the tcp_bbr module); kernel QUIC has reno
// and cubic; quic-go has only its own CUBIC.
var CongestionControls = []string{"reno", "cubic", "bbr"}

// QuicGoCongestionControl is the algorithm quic-go always uses: its
// cubic_sender (CUBIC, with Reno's window growth only when configured so,
// which quic-go's API does not offer).
const QuicGoCongestionControl = "cubic"

// ValidCongestionControl reports whether name is one --cc takes.
func ValidCongestionControl(name string) error {
	for _, n := range CongestionControls {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("congestion control %q: use one of reno, cubic, bbr", name)
}

// SupportsEarly reports whether the transport can send its request as 0-RTT
// data on a resumed session (the QUIC transports).
func SupportsEarly(name string) bool { return name == "kquic" || name == "quic-go" }

package interop

import (
	"slices"

	"kquic.dev/quicnet"
)

// kquic's HTTP/3 is quicnet/http3 over kernel QUIC, where quicnet has it
// built in (not with -tags nokquic).
func init() {
	if slices.Contains(quicnet.Implementations(), quicnet.Kernel) {
		kquicH3 = Quicnet{Impl: quicnet.Kernel}
	}
}

package all

import (
	_ "kquic.dev/bench/mode/handshake"
	_ "kquic.dev/bench/mode/rr"
)

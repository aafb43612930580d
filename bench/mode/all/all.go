package all

import (
	_ "kquic.dev/bench/mode/bulk"
	_ "kquic.dev/bench/mode/h3"
	_ "kquic.dev/bench/mode/handshake"
	_ "kquic.dev/bench/mode/native"
	_ "kquic.dev/bench/mode/rr"
	_ "kquic.dev/bench/mode/streams"
)

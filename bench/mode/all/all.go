package all

import (
	_ "kquic.dev/bench/mode/rr"
)

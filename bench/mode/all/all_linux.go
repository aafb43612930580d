//go:build linux

package all

import (
	_ "kquic.dev/bench/mode/h3"
)

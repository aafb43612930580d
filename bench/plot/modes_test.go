package plot_test

// The modes whose results the tests read register their parts.
import _ "kquic.dev/bench/mode/all"

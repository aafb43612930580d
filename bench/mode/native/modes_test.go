package native_test

// The driver measures the default mode's cells.
import _ "kquic.dev/bench/mode/bulk"

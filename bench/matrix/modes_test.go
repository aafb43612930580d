package matrix_test

// The modes and drivers the tests plan with register their spec sides
// (the default mode among them).
import _ "kquic.dev/bench/mode/all"

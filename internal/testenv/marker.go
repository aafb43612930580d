package testenv

// QUICMarker is what Require logs in a test that found the QUIC module: the
// guest pass of make test counts those tests by it (scripts/testsummary).
const QUICMarker = "testenv: runs against the QUIC module"

// KnownBugMarker begins the skip of a test whose known module bug
// reproduced on a build known to have it (ModuleBug): an expected failure,
// which scripts/testsummary counts as that, not as a skip.
const KnownBugMarker = "KNOWN MODULE BUG"

package testenv

// QUICMarker is what Require logs in a test that found the QUIC module: the
// guest pass of make test counts those tests by it (scripts/testsummary).
const QUICMarker = "testenv: runs against the QUIC module"

//go:build linux

package kquic_test

import "kquic.dev/kmod/knownbugs"

// The module's bugs that tests here reproduce: the list, with the builds
// each was seen on, is kmod/knownbugs' (shared with kqbench interop, which
// reports a failure that shows one as that bug). A build listed there that
// no longer shows a deterministic bug fails its test here, and so does a
// build not listed that shows one.
var (
	bugStalePTO              = knownbugs.StalePTO
	bugStopSendingBeforeData = knownbugs.StopSendingBeforeData
	bugStaleCredit           = knownbugs.StaleCredit
	bugLargeFirstInitial     = knownbugs.LargeFirstInitial
	bugEarlyStreamID         = knownbugs.EarlyStreamID
	bugALPNSecondInitial     = knownbugs.ALPNSecondInitial
	bugInitialAck            = knownbugs.InitialAck
	bugPTOFirstInitial       = knownbugs.PTOFirstInitial
	bugLateMaxStreamData     = knownbugs.LateMaxStreamData
)

package knownbugs

import "strings"

// Bug is a bug of the QUIC module that a test reproduces, and the module
// builds it was seen on.
type Bug struct {
	// ID is a short name for results and matrices ("early-stream-id").
	ID string
	// What the bug is, for the report.
	What string
	// SeenOn lists the builds that have it, each in one of the forms Builds
	// gives ("code:…", "lxin/quic@…", "build-id:…").
	SeenOn []string
	// Flaky says the reproduction depends on timing: a run on a build that
	// has the bug may not show it.
	Flaky bool
	// Test names its reproducer ("kquic.TestModuleBugEarlyStreamID").
	Test string
	// Interop are the signs of the bug in a failed `kqbench interop` case;
	// a failure matching one of them is this bug.
	Interop []Sign
}

// Sign is how a bug shows in a failed interop case: every field set must
// hold.
type Sign struct {
	// Cases the sign holds in (empty: any).
	Cases []string
	// Kernel is the role kernel QUIC plays in the case: "client", "server"
	// or "" (either).
	Kernel string
	// Peer, if set, is the implementation at the other end ("quic-go").
	Peer string
	// Reason is a substring of the failure's reason.
	Reason string
	// Log, if set, is a substring of one of the module's kernel log lines
	// during the case.
	Log string
}

// On says whether the bug was seen on one of builds.
func (b *Bug) On(builds []string) bool {
	for _, s := range b.SeenOn {
		for _, id := range builds {
			if s == id {
				return true
			}
		}
	}
	return false
}

// Failure is a failed interop case, as Match reads it.
type Failure struct {
	Case string
	// Server and Client name the implementations.
	Server, Client string
	// KernelClient and KernelServer say which ends ran on kernel QUIC.
	KernelClient, KernelServer bool
	Reason                     string
	// Log is the module's kernel log lines during the case.
	Log []string
}

func (s Sign) holds(f Failure) bool {
	if len(s.Cases) > 0 {
		in := false
		for _, c := range s.Cases {
			in = in || c == f.Case
		}
		if !in {
			return false
		}
	}
	switch s.Kernel {
	case "client":
		if !f.KernelClient {
			return false
		}
	case "server":
		if !f.KernelServer {
			return false
		}
	default:
		if !f.KernelClient && !f.KernelServer {
			return false
		}
	}
	if s.Peer != "" {
		switch {
		case s.Kernel == "client" && f.Server != s.Peer, s.Kernel == "server" && f.Client != s.Peer,
			s.Kernel == "" && f.Server != s.Peer && f.Client != s.Peer:
			return false
		}
	}
	if s.Reason != "" && !strings.Contains(f.Reason, s.Reason) {
		return false
	}
	if s.Log != "" {
		seen := false
		for _, l := range f.Log {
			seen = seen || strings.Contains(l, s.Log)
		}
		if !seen {
			return false
		}
	}
	return true
}

// Match returns the known bug whose signs the failure shows, preferring
// one seen on builds (the module the case ran on), and whether it was seen
// there; nil if none matches.
func Match(f Failure, builds []string) (*Bug, bool) {
	var other *Bug
	for _, b := range All {
		for _, s := range b.Interop {
			if !s.holds(f) {
				continue
			}
			if b.On(builds) {
				return b, true
			}
			if other == nil {
				other = b
			}
		}
	}
	return other, false
}

// ByID returns the bug of that ID, or nil.
func ByID(id string) *Bug {
	for _, b := range All {
		if b.ID == id {
			return b
		}
	}
	return nil
}

// CodeHash is the "code:…" name among builds, or "".
func CodeHash(builds []string) string {
	for _, b := range builds {
		if strings.HasPrefix(b, "code:") {
			return b
		}
	}
	return ""
}

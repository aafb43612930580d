package interop

import (
	"fmt"
	"strings"

	"kquic.dev/kmod/knownbugs"
)

// Statuses of a result, as the runner's.
const (
	Pass        = "pass"
	Fail        = "fail"
	Unsupported = "unsupported"
	// KnownBug is a failure that shows a known bug of the QUIC module
	// (kmod/knownbugs) on a build known to have it: neither a pass nor an
	// unexplained failure.
	KnownBug = "known-bug"
)

// Result is one case between one server and one client.
type Result struct {
	Server string `json:"server"`
	Client string `json:"client"`
	Case   string `json:"case"`
	// ALPN is the application protocol it ran over.
	ALPN   string `json:"alpn,omitempty"`
	Status string `json:"status"`
	// Reason says why it failed or is unsupported: the failed check and
	// what it saw, or the client's error.
	Reason string `json:"reason,omitempty"`
	// Checks are the checks that ran, each "name: ok" or its failure.
	Checks []string `json:"checks,omitempty"`
	// Millis is the client's run time; Goodput its rate for goodput, in
	// Mbit/s.
	Millis  int64   `json:"millis,omitempty"`
	Goodput float64 `json:"goodput_mbps,omitempty"`
	// Evidence is the case's directory: trace.pcapng, keys.log, the
	// ends' output, the files.
	Evidence string `json:"evidence,omitempty"`
	// KnownBug names the known module bug (kmod/knownbugs' ID and what it
	// is) whose signs this failure shows; Status is KnownBug where the
	// module build is known to have it, Fail where it is not.
	KnownBug string `json:"known_bug,omitempty"`
	// Module is the code hash (kmod.CodeHash, "code:…") of the QUIC module
	// a kernel end ran on; KernelLog the module's kernel log lines during
	// the case (all of the log is in the evidence's kernel.log).
	Module    string   `json:"module,omitempty"`
	KernelLog []string `json:"kernel_log,omitempty"`
	// Kernel says which ends of a failed case ran on kernel QUIC:
	// "server", "client" or "both".
	Kernel string `json:"kernel,omitempty"`
}

func kernelEnds(server, client bool) string {
	switch {
	case server && client:
		return "both"
	case server:
		return "server"
	case client:
		return "client"
	}
	return ""
}

// judgeKnown gives a failure the known-bug verdict (kmod/knownbugs.Match)
// for the module builds it ran on.
func (r *Result) judgeKnown(builds []string) {
	f := knownbugs.Failure{Case: r.Case, Server: r.Server, Client: r.Client, KernelClient: r.Kernel == "client" || r.Kernel == "both",
		KernelServer: r.Kernel == "server" || r.Kernel == "both", Reason: r.Reason, Log: r.KernelLog}
	bug, on := knownbugs.Match(f, builds)
	if bug == nil {
		return
	}
	r.KnownBug = bug.ID + ": " + bug.What
	if on {
		r.Status = KnownBug
	} else {
		r.Reason += fmt.Sprintf(" (this looks like known module bug %s, but module %s is not known to have it: seen on %v)", bug.ID, r.Module, bug.SeenOn)
	}
}

// Rejudge gives the failures of an earlier run the verdicts of the known
// bugs as listed now (a bug added since, a build added to one), by the
// module code hash each ran on. kernel names the implementations over
// kernel QUIC, for results written before Result.Kernel was.
func Rejudge(res []Result, kernel func(name string) bool) {
	for i := range res {
		r := &res[i]
		if (r.Status != Fail && r.Status != KnownBug) || r.Module == "" {
			continue
		}
		if r.Kernel == "" {
			r.Kernel = kernelEnds(kernel(r.Server), kernel(r.Client))
		}
		if r.Status == KnownBug {
			r.Status = Fail
		}
		if i := strings.Index(r.Reason, " (this looks like known module bug "); i >= 0 {
			r.Reason = r.Reason[:i]
		}
		r.KnownBug = ""
		r.judgeKnown([]string{r.Module})
	}
}

//go:build linux

package fuzz

import (
	"context"
	"strings"
	"testing"
	"time"

	"kquic.dev/conformance"
	"kquic.dev/internal/testenv"
)

// With a KCOV kernel and quic.ko built for it ($KQUIC_KCOV_KERNEL,
// $KQUIC_KCOV_MODULES, $KQUIC_KCOV_MODULE: scripts/kcov-kernel), a short
// fuzz run of kernel QUIC in both roles reports the module's coverage:
// every address the guest recorded is one of the module's coverage points
// (the layout and the KASLR offset are right), and the socket calls the
// target makes are reached. The run also has the KCOV kernel's KASAN
// watching: a finding is a real one.
func TestKCOVFuzzRun(t *testing.T) {
	cfg, ko := testenv.KCOVVM(t)
	cfg.Load = []string{"udp_tunnel", "ip6_udp_tunnel"}
	dir := t.TempDir()
	cfg.Shares = []string{dir}
	cfg.Timeout = 15 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rep, err := RunVM(ctx, VMRun{
		Config:     cfg,
		Dir:        dir,
		Command:    []string{cfg.Init, "fuzz", "--target", "kquic", "--roles", "server,client", "--inputs", "200", "--batch", "50", "--seed", "1", "--kcov", "on"},
		ModuleFile: ko,
		Repro:      Reproducer{Target: "kquic", Roles: []conformance.Role{conformance.Server, conformance.Client}, Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteSummary(&b)
	t.Log(b.String())
	for _, f := range rep.Findings {
		t.Errorf("finding (%s) after input %d: %s\n%s", f.Oracle, f.After, f.Detail, strings.Join(f.Lines, "\n"))
	}
	c := rep.Coverage
	if c == nil || rep.KCOV == nil {
		t.Fatalf("no coverage in the report (KCOV %v)", rep.KCOV != nil)
	}
	if c.Unmapped != 0 || c.Reached == 0 || c.Reached != len(rep.KCOV.PCs) {
		t.Fatalf("%d addresses recorded, %d of them coverage points of %s, %d not", len(rep.KCOV.PCs), c.Reached, ko, c.Unmapped)
	}
	for _, fn := range []string{"quic_init_sock", "quic_setsockopt", "quic_sendmsg", "quic_recvmsg", "quic_close"} {
		if f := c.Function(fn); f == nil || f.Reached == 0 {
			t.Errorf("%s not reached: %+v", fn, f)
		}
	}
	if c.Overflows != 0 {
		t.Errorf("%d trace buffers overflowed", c.Overflows)
	}
	// Every socket call ran on a traced thread (the pool leaves a few of
	// the runtime's threads out: sysmon, the template thread, threads
	// asleep while it was made; quicsock.Around traces those it needs).
	if c.Missed != 0 || c.ThreadsTraced == 0 {
		t.Errorf("%d socket calls untraced; %d of the fuzzer's %d threads traced", c.Missed, c.ThreadsTraced, c.Threads)
	}
	// What of the receive path task context sees: the socket backlog,
	// processed by release_sock in the target's calls, reaches the packet
	// and frame parsers; the softirq entry does not show.
	for _, fn := range []string{"quic_backlog_rcv", "quic_packet_process", "quic_frame_process"} {
		if f := c.Function(fn); f == nil || f.Calls == 0 {
			t.Errorf("%s not reached from task context: %+v", fn, f)
		}
	}
	if f := c.Function("quic_udp_rcv"); f == nil || f.Reached != 0 {
		t.Errorf("quic_udp_rcv, run in softirq, shows in a task-mode trace: %+v", f)
	}
	var fns strings.Builder
	c.WriteFunctions(&fns)
	t.Logf("functions:\n%s", fns.String())
}

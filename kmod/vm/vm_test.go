//go:build linux

package vm_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

func TestCommandOutputAndExitStatus(t *testing.T) {
	cfg := testenv.VM(t)
	var out, errb, notices bytes.Buffer
	cfg.Stdout, cfg.Stderr, cfg.Notices = &out, &errb, &notices
	res, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", `echo "out $(uname -r)"; echo err >&2; exit 3`})
	if notices.Len() > 0 {
		t.Logf("the harness's notices: %s", notices.String())
	}
	var exit *vm.ExitError
	if !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("Run = %v, want an ExitError with status 3", err)
	}
	if res.ExitCode != 3 {
		t.Errorf("Result.ExitCode = %d, want 3", res.ExitCode)
	}
	if host, _ := os.ReadFile("/proc/sys/kernel/osrelease"); strings.Contains(out.String(), strings.TrimSpace(string(host))) {
		t.Errorf("the command ran on the host kernel: %q", out.String())
	}
	if !strings.HasPrefix(out.String(), "out ") || errb.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q; want \"out <release>\" and \"err\"", out.String(), errb.String())
	}
	t.Logf("accel %s, boot %v, run %v", res.Accel, res.Boot, res.Run)
}

func TestSuccessIsNotAnError(t *testing.T) {
	cfg := testenv.VM(t)
	res, err := vm.Run(context.Background(), cfg, []string{"/bin/true"})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run(true) = %+v, %v", res, err)
	}
}

func TestShareBringsResultsBack(t *testing.T) {
	cfg := testenv.VM(t)
	dir := t.TempDir()
	cfg.Shares = []string{dir}
	want := filepath.Join(dir, "result.txt")
	// The guest may write anywhere, but only shares reach the host: the rest
	// goes to the guest's own overlay.
	script := `echo from-guest > ` + want + ` && touch /etc/kqvm-should-not-exist`
	if _, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", script}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil || string(b) != "from-guest\n" {
		t.Fatalf("result file = %q, %v", b, err)
	}
	if _, err := os.Stat("/etc/kqvm-should-not-exist"); err == nil {
		t.Fatal("the guest wrote into the host's /etc")
	}
}

func TestHangingCommandTimesOut(t *testing.T) {
	cfg := testenv.VM(t)
	// The timeout covers the boot too: long enough for a boot on a loaded
	// machine (41 s seen beside three other guests), so that it is the
	// command that overruns it.
	cfg.Timeout = 90 * time.Second
	start := time.Now()
	_, err := vm.Run(context.Background(), cfg, []string{"/bin/sleep", "3600"})
	var ge *vm.GuestError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "did not finish within 1m30s") {
		t.Fatalf("Run(sleep) = %v, want a GuestError about the timeout", err)
	}
	if d := time.Since(start); d > cfg.Timeout+time.Minute {
		t.Errorf("Run took %v after a %v timeout", d, cfg.Timeout)
	}
	assertNoQemuLeft(t)
}

func TestModuleLoadFailureShowsKernelLog(t *testing.T) {
	cfg := testenv.VM(t)
	if cfg.Accel == "kvm" {
		t.Skip("relies on TCG's CPU model")
	}
	cfg.Accel = "tcg"
	// Under TCG the guest CPU has no VMX, so kvm_intel's init fails and
	// the kernel says why.
	cfg.Load = []string{"kvm_intel"}
	_, err := vm.Run(context.Background(), cfg, []string{"/bin/true"})
	var ge *vm.GuestError
	if !errors.As(err, &ge) {
		t.Fatalf("Run = %v, want a GuestError", err)
	}
	for _, want := range []string{"load kernel modules", "kvm_intel", "kernel log:", "VMX not supported"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestBadInputFailsBeforeBooting(t *testing.T) {
	cfg := testenv.VM(t)
	for name, tc := range map[string]struct {
		mut  func(*vm.Config)
		want string
	}{
		"no kernel":       {func(c *vm.Config) { c.Kernel = "/nonexistent/bzImage" }, "not a readable file"},
		"unknown module":  {func(c *vm.Config) { c.Load = []string{"no_such_module"} }, "no_such_module is not in"},
		"no modules.dep":  {func(c *vm.Config) { c.Modules = t.TempDir() }, "no modules.dep"},
		"bad accel":       {func(c *vm.Config) { c.Accel = "hvf" }, "accelerator"},
		"missing qemu":    {func(c *vm.Config) { c.Qemu = "qemu-system-nonexistent" }, "apt-get install qemu-system-x86"},
		"init not ELF":    {func(c *vm.Config) { c.Init = "/etc/passwd" }, "not an ELF executable"},
		"share not a dir": {func(c *vm.Config) { c.Shares = []string{"/nonexistent/dir"} }, "not a directory"},
		"forward no port": {func(c *vm.Config) { c.Forwards = []vm.Forward{{Proto: "udp", GuestPort: 443}} }, "give both ports"},
		"forward sctp":    {func(c *vm.Config) { c.Forwards = []vm.Forward{{Proto: "sctp", HostPort: 1, GuestPort: 1}} }, "use udp or tcp"},
	} {
		t.Run(name, func(t *testing.T) {
			c := cfg
			tc.mut(&c)
			_, err := vm.Run(context.Background(), c, []string{"/bin/true"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	assertNoQemuLeft(t)
}

func TestKernelThatDoesNotBoot(t *testing.T) {
	cfg := testenv.VM(t)
	bogus := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(bogus, bytes.Repeat([]byte("not a kernel "), 1000), 0o644)
	cfg.Kernel = bogus
	cfg.Timeout = time.Minute
	_, err := vm.Run(context.Background(), cfg, []string{"/bin/true"})
	var ge *vm.GuestError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "without reporting") {
		t.Fatalf("Run with a bogus kernel = %v, want a GuestError saying the guest never reported", err)
	}
	assertNoQemuLeft(t)
}

// assertNoQemuLeft fails if a qemu started by this process is still running.
func assertNoQemuLeft(t *testing.T) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("qemu-system")) || !bytes.Contains(b, []byte("kqvm-")) {
			continue
		}
		st, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if f := strings.Fields(string(st)); len(f) > 3 && f[3] == strconv.Itoa(os.Getpid()) {
			t.Errorf("qemu left running: %s", bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

func TestModulesAreLoadedWithDependencies(t *testing.T) {
	cfg := testenv.VM(t)
	cfg.Load = []string{"sch_netem", "vxlan", "no_such_module_anywhere?"}
	var out bytes.Buffer
	cfg.Stdout = &out
	_, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", "cd /sys/module && ls -d sch_netem vxlan udp_tunnel ip6_udp_tunnel"})
	if err != nil {
		t.Fatalf("Run = %v (output %q)", err, out.String())
	}
	if got := strings.Fields(out.String()); len(got) != 4 {
		t.Errorf("loaded modules = %q, want sch_netem, vxlan and its dependencies", got)
	}
}

// TestDynamicInitBoots: a kqbench built with cgo (what `go build` and `go
// install` make where a C compiler exists) is dynamically linked, and boots
// the guest as well as a static one.
func TestDynamicInitBoots(t *testing.T) {
	cfg := testenv.VM(t)
	testenv.Tool(t, "gcc", "gcc")
	bin := filepath.Join(t.TempDir(), "kqbench")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "kquic.dev/cmd/kqbench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build with cgo: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	dynamic := false
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	f.Close()
	if !dynamic {
		t.Fatal("kqbench built with CGO_ENABLED=1 is static: this test would prove nothing")
	}
	cfg.Init = bin
	var out bytes.Buffer
	cfg.Stdout = &out
	if _, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", "echo ran in $(uname -r)"}); err != nil {
		t.Fatalf("Run with a dynamic init = %v (output %q)", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "ran in ") {
		t.Errorf("output %q", out.String())
	}
}

// TestStdinStreams: the command reads the host's input as it is written
// (a line answered before the next is sent), and sees its end.
func TestStdinStreams(t *testing.T) {
	cfg := testenv.VM(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	cfg.Stdin, cfg.Stdout = inR, outW
	done := make(chan error, 1)
	go func() {
		_, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", `while read l; do echo "got $l"; done; echo eof`})
		outW.Close()
		done <- err
	}()
	lines := bufio.NewScanner(outR)
	for _, w := range []string{"one", "two"} {
		if _, err := io.WriteString(inW, w+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() || lines.Text() != "got "+w {
			t.Fatalf("after sending %q the command wrote %q (%v), want %q", w, lines.Text(), lines.Err(), "got "+w)
		}
	}
	inW.Close()
	if !lines.Scan() || lines.Text() != "eof" {
		t.Fatalf("after closing the input the command wrote %q, want \"eof\"", lines.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestStdinDefaultIsEmpty: without Stdin the command reads end of file at
// once.
func TestStdinDefaultIsEmpty(t *testing.T) {
	cfg := testenv.VM(t)
	var out bytes.Buffer
	cfg.Stdout = &out
	if _, err := vm.Run(context.Background(), cfg, []string{"/bin/sh", "-c", `cat; echo done`}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "done\n" {
		t.Errorf("output %q, want \"done\"", out.String())
	}
}

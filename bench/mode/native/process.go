//go:build linux

package native

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"kquic.dev/bench/mode"
	"kquic.dev/bench/topo"
	"kquic.dev/internal/tailbuf"
)

// startIn starts args in the namespace of d (pinned to cpu with taskset
// when cpu >= 0 and taskset exists), its output going to out.
func startIn(ctx context.Context, d *topo.Device, cpu int, out *tailbuf.Buffer, args ...string) (*exec.Cmd, error) {
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			args = append([]string{ts, "-c", strconv.Itoa(cpu)}, args...)
		}
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = toolEnv()
	// The process forks from the locked thread inside the namespace.
	if err := d.Do(cmd.Start); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	return cmd, nil
}

func stopProcess(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// waitPort waits until a socket is bound to the port (proto "udp" or
// "tcp", listening for tcp) in the calling thread's network namespace.
func waitPort(ctx context.Context, proto string, port int, limit time.Duration) error {
	suffix := fmt.Sprintf(":%04X", port)
	deadline := time.Now().Add(limit)
	for {
		for _, f := range []string{"/proc/thread-self/net/" + proto, "/proc/thread-self/net/" + proto + "6"} {
			b, _ := os.ReadFile(f)
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				fl := strings.Fields(sc.Text())
				if len(fl) > 3 && strings.HasSuffix(fl[1], suffix) && (proto == "udp" || fl[3] == "0A") {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s port %d after %v", proto, port, limit)
		}
		if err := mode.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// toolEnv is the tools' environment: this process's, with TMPDIR on a
// memory file system where it names none. iperf3 keeps each stream's
// buffer in a temporary file it unlinks while open, which a 9p mount
// refuses (ENOENT: "unable to create a new stream"); in the guest /tmp is
// the host's over 9p when kqbench matrix --vm shares it for --out.
func toolEnv() []string {
	env := os.Environ()
	if os.Getenv("TMPDIR") != "" {
		return env
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() && unix.Access("/dev/shm", unix.W_OK) == nil {
		env = append(env, "TMPDIR=/dev/shm")
	}
	return env
}

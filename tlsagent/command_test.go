//go:build linux

package tlsagent

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
	"kquic.dev/internal/testenv"
)

// `kqbench agent` as a service runs it: it starts with a tlshd.conf, joins
// the group, and exits 0 on SIGTERM after its shutdown.
func TestCommandSIGTERM(t *testing.T) {
	testenv.Root(t)
	a, _ := listen(t, nil) // skips where the kernel has no family
	a.Close()
	bin := testenv.Kqbench(t)
	conf := filepath.Join(t.TempDir(), "config")
	os.WriteFile(conf, []byte("[debug]\nloglevel=0\n\n[authenticate.server]\nx509.certificate="+testcerts.Path("server.pem")+
		"\nx509.private_key="+testcerts.Path("server-key.pem")+"\n"), 0o600)
	cmd := exec.Command(bin, "agent", "--config", conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log []string
	wait := func(word string) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the agent exited before saying %q:\n%s", word, strings.Join(log, "\n"))
				}
				log = append(log, l)
				if strings.Contains(l, word) {
					return
				}
			case <-timeout:
				t.Fatalf("the agent did not say %q within 30s:\n%s", word, strings.Join(log, "\n"))
			}
		}
	}
	wait("serving handshake requests")
	cmd.Process.Signal(syscall.SIGTERM)
	wait("shutting down")
	for l := range lines {
		log = append(log, l)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || err != nil {
		t.Fatalf("kqbench agent after SIGTERM: %v\n%s", err, strings.Join(log, "\n"))
	}
}

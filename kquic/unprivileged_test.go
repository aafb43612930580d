//go:build linux

package kquic_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kquic.dev/internal/testenv"
	"kquic.dev/kmod"
	"kquic.dev/kquic"
)

// unprivEnv makes the test binary, started again, run the unprivileged
// server and client instead of the tests.
const unprivEnv = "KQUIC_TEST_UNPRIVILEGED"

func TestMain(m *testing.M) {
	if addr := os.Getenv(floodEnv); addr != "" {
		floodMain(addr)
		return
	}
	if os.Getenv(unprivEnv) == "1" {
		if err := unprivilegedEcho(); err != nil {
			fmt.Fprintln(os.Stderr, "unprivileged:", err)
			os.Exit(1)
		}
		fmt.Println("unprivileged: ok, uid", os.Getuid())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// unprivilegedEcho listens, dials and echoes over kernel QUIC in this
// process, which runs as an ordinary user.
func unprivilegedEcho() error {
	ctls, stls := tlsPair(nopTB{})
	ln, err := kquic.Listen("udp", "127.0.0.1:0", &kquic.Config{TLS: stls})
	if err != nil {
		return err
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.Copy(s, s)
		s.Close()
	}()
	c, err := kquic.DialAddr(ctx, ln.AddrPort(), &kquic.Config{TLS: ctls})
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.OpenStream()
	if err != nil {
		return err
	}
	msg := bytes.Repeat([]byte("unprivileged "), 1000)
	if _, err := s.Write(msg); err != nil {
		return err
	}
	s.Close()
	s.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(s)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("echo: %d bytes back of %d", len(got), len(msg))
	}
	return nil
}

// TestUnprivilegedServerAndClient: a server and a client run as an ordinary
// user (nobody), as a server facing the internet should.
func TestUnprivilegedServerAndClient(t *testing.T) {
	testenv.Root(t) // to become nobody
	testenv.Require(t, kmod.FeatureQUIC)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// go test's binary sits in a directory only root may enter.
	dir, err := os.MkdirTemp("", "kquic-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "kquic.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), unprivEnv+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "unprivileged: ok, uid 65534") {
		t.Fatalf("server and client as nobody: %v\n%s", err, out)
	}
}

// nopTB lets test helpers that take a testing.TB run outside a test.
type nopTB struct{ testing.TB }

func (nopTB) Helper()                   {}
func (nopTB) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (nopTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

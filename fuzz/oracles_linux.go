package fuzz

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// KernelLogPatterns are the kernel log's words for something that went
// wrong (syzkaller's list, in short).
var KernelLogPatterns = []string{
	"BUG:", "WARNING:", "Oops", "general protection", "KASAN:", "UBSAN:", "KFENCE:", "refcount_t:",
	"list_del corruption", "list_add corruption", "soft lockup", "hung task", "blocked for more than",
	"Kernel panic", "kernel BUG at", "rcu: INFO", "self-detected stall", "unregister_netdevice: waiting",
}

// KernelLog watches /dev/kmsg from the moment it is opened.
type KernelLog struct{ fd int }

// OpenKernelLog opens /dev/kmsg at its end (root, or kernel.dmesg_restrict
// off).
func OpenKernelLog() (*KernelLog, error) {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("fuzz: open /dev/kmsg: %w (the kernel log oracle needs root)", err)
	}
	if _, err := unix.Seek(fd, 0, unix.SEEK_END); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("fuzz: /dev/kmsg: %w", err)
	}
	return &KernelLog{fd: fd}, nil
}

// Check implements Watcher: the records since the last call, from the first
// that matches a pattern on (its trace), or nil if none matches.
func (k *KernelLog) Check() []string {
	var out []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(k.fd, buf)
		if errors.Is(err, unix.EPIPE) {
			continue // records overwritten before they were read
		}
		if err != nil || n <= 0 {
			return out
		}
		msg := string(buf[:n])
		if i := strings.IndexByte(msg, ';'); i >= 0 {
			msg = msg[i+1:]
		}
		msg = strings.TrimRight(strings.SplitN(msg, "\n", 2)[0], "\r")
		if out == nil && !matches(msg) {
			continue
		}
		if len(out) < 60 {
			out = append(out, msg)
		}
	}
}

func matches(line string) bool {
	for _, p := range KernelLogPatterns {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// Close closes /dev/kmsg.
func (k *KernelLog) Close() error { return unix.Close(k.fd) }

// ModuleLeaks checks that kernel QUIC's sockets (/proc/net/protocols) and
// slab objects (/proc/slabinfo, caches named quic*) return to where they
// were, and, with Unload, that the module then unloads.
type ModuleLeaks struct {
	Unload bool
	base   map[string]int
}

// Baseline implements LeakCheck.
func (m *ModuleLeaks) Baseline() error {
	var err error
	m.base, err = quicCounts()
	return err
}

// Settled implements LeakCheck. No event says a socket was freed: it reads
// the counts every 100 ms until they match or ctx ends.
func (m *ModuleLeaks) Settled(ctx context.Context) error {
	var diff []string
	for {
		now, err := quicCounts()
		if err != nil {
			return err
		}
		diff = diff[:0]
		for k, v := range now {
			if v > m.base[k] {
				diff = append(diff, fmt.Sprintf("%s %d (was %d)", k, v, m.base[k]))
			}
		}
		if len(diff) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("once every connection had closed, still: %s", strings.Join(diff, ", "))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if m.Unload {
		if err := unix.DeleteModule("quic", unix.O_NONBLOCK); err != nil {
			return fmt.Errorf("rmmod quic after the run: %w", err)
		}
	}
	return nil
}

// quicCounts reads the QUIC protocols' socket counts and the quic* slab
// caches' active objects, each cache shrunk first: SLUB counts the objects
// of its per-CPU slabs as active, freed or not.
func quicCounts() (map[string]int, error) {
	caches, _ := filepath.Glob("/sys/kernel/slab/quic*/shrink")
	for _, c := range caches {
		os.WriteFile(c, []byte("1"), 0)
	}
	out := map[string]int{}
	f, err := os.Open("/proc/net/protocols")
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 2 && strings.HasPrefix(fs[0], "QUIC") {
			n, _ := strconv.Atoi(fs[2])
			out["sockets "+fs[0]] = n
		}
	}
	f.Close()
	if f, err := os.Open("/proc/slabinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 1 && strings.HasPrefix(fs[0], "quic") {
				n, _ := strconv.Atoi(fs[1])
				out["slab "+fs[0]] = n
			}
		}
		f.Close()
	}
	return out, nil
}

//go:build linux

package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"kquic.dev/kmod"
)

// IsGuestInit reports whether this process is the init of a guest started by
// [Run]. A binary used as the guest's init calls [GuestMain] first thing in
// main when it is.
func IsGuestInit() bool {
	return os.Getpid() == 1 && os.Getenv(initEnv) == "1"
}

// InGuest reports whether the current process runs inside a guest started by
// [Run] (for tests that must not start a VM inside a VM).
func InGuest() bool {
	b, err := os.ReadFile("/proc/cmdline")
	return err == nil && strings.Contains(" "+string(b)+" ", " "+guestMarker+" ")
}

// GuestMain is the guest's init: it prepares the guest, runs the command the
// host asked for, reports its exit status and powers off. It never returns.
func GuestMain() {
	g := &guest{}
	code, err := g.run()
	g.report(code, err)
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART) // qemu runs with -no-reboot: it exits
	for {
		time.Sleep(time.Hour)
	}
}

type guest struct {
	// statusMu keeps the lines written to status whole: the command's
	// waiter and the host's requests both write there.
	statusMu sync.Mutex
	status   *os.File
	// outs are the command's output ports, kept open for guestDump's look
	// at them.
	outs map[string]*os.File
	// nicDev is the pair's link device, whose usage over the command is
	// reported when it ends ("" for a lone guest).
	nicDev string
}

// stageError is a failure of the guest's own preparation, not of the command.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }

func stage(name string, err error) error {
	if err == nil {
		return nil
	}
	return &stageError{name, err}
}

// say writes one line to the status port, if it is open.
func (g *guest) say(format string, a ...any) {
	if g.status == nil {
		return
	}
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	fmt.Fprintf(g.status, format+"\n", a...)
}

func (g *guest) report(code int, err error) {
	g.statusMu.Lock()
	defer g.statusMu.Unlock()
	out := g.status
	if out == nil {
		out, _ = os.OpenFile("/dev/console", os.O_WRONLY, 0)
	}
	if out == nil {
		return
	}
	if err != nil {
		// One line: newlines in the message (kernel log lines) are escaped.
		msg, _ := json.Marshal(err.Error())
		fmt.Fprintf(out, "error %s\n", msg)
		return
	}
	fmt.Fprintf(out, "exit %d\n", code)
}

func (g *guest) run() (int, error) {
	if err := mountEarly(); err != nil {
		return 0, stage("mount /dev, /proc, /sys", err)
	}
	if f, err := openPort(portStatus); err == nil {
		g.status = f
	}
	raw, err := os.ReadFile(specPath)
	if err != nil {
		return 0, stage("read job", err)
	}
	var s spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, stage("read job", err)
	}
	for _, m := range s.EarlyModules {
		if err := kmod.LoadFile(m, ""); err != nil {
			return 0, stage("load 9p modules", err)
		}
	}
	if err := switchRoot(); err != nil {
		return 0, stage("mount the host's root over 9p", err)
	}
	if err := mountLate(&s); err != nil {
		return 0, stage("mount guest file systems", err)
	}
	for _, m := range s.Modules {
		if err := kmod.LoadFile(m, ""); err != nil {
			return 0, stage("load kernel modules", err)
		}
	}
	if err := setupNet(s.Name); err != nil {
		return 0, stage("bring up loopback", err)
	}
	info, err := describe(&s)
	if err != nil {
		return 0, err
	}
	if info.NIC != nil {
		g.nicDev = info.NIC.Dev
		s.Env = append(s.Env, "KQVM_NAME="+s.Name, "KQVM_DEV="+info.NIC.Dev,
			"KQVM_ADDR="+strings.Split(info.NIC.Addr, "/")[0], "KQVM_PEER="+info.NIC.Peer)
	}
	if b, err := json.Marshal(info); err == nil {
		g.say("info %s", b)
	}
	return g.exec(&s)
}

// describe configures the guest's link, if it has one, and says what the
// guest is: its boot, kernel, out-of-tree modules and link.
func describe(s *spec) (*GuestInfo, error) {
	info := &GuestInfo{}
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	info.BootID = strings.TrimSpace(string(b))
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		info.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	for _, name := range s.Report {
		m, err := kmod.Loaded(name)
		if err != nil {
			return nil, stage("read the loaded modules", err)
		}
		info.Modules = append(info.Modules, *m)
	}
	if s.FwdNIC != nil {
		if _, err := setupNIC(s.FwdNIC); err != nil {
			return nil, stage("configure the forwarding device", err)
		}
	}
	if s.NIC != nil {
		nic, err := setupNIC(s.NIC)
		if err != nil {
			return nil, stage("configure the link", err)
		}
		info.NIC = nic
	}
	return info, nil
}

func mountEarly() error {
	for _, m := range []struct{ src, dst, fs string }{
		{"devtmpfs", "/dev", "devtmpfs"},
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
	} {
		os.MkdirAll(m.dst, 0o755)
		if err := unix.Mount(m.src, m.dst, m.fs, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.dst, err)
		}
	}
	return nil
}

// 9p options: large messages; the read-only root may cache freely (the host
// does not change it under the guest), writable shares cache only for mmap
// so that both sides see each other's writes.
const (
	msize      = "msize=512000"
	opts9pRO   = "trans=virtio,version=9p2000.L," + msize + ",cache=loose"
	opts9pRW   = "trans=virtio,version=9p2000.L," + msize + ",cache=mmap"
	newRootDir = "/newroot"
)

// switchRoot makes the host's root, shared read-only over 9p, the guest's
// root, with a tmpfs overlay on top so that the guest may create files
// anywhere (they vanish with the guest; shares are what persists).
func switchRoot() error {
	for _, d := range []string{"/lower", "/rw", newRootDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount(rootTag, "/lower", "9p", unix.MS_RDONLY, opts9pRO); err != nil {
		return fmt.Errorf("mount 9p %s: %w", rootTag, err)
	}
	if err := unix.Mount("tmpfs", "/rw", "tmpfs", 0, "mode=755"); err != nil {
		return fmt.Errorf("mount tmpfs for the overlay: %w", err)
	}
	os.MkdirAll("/rw/upper", 0o755)
	os.MkdirAll("/rw/work", 0o755)
	if err := unix.Mount("overlay", newRootDir, "overlay", 0, "lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work"); err != nil {
		return fmt.Errorf("mount overlay over the 9p root: %w", err)
	}
	for _, d := range []string{"/dev", "/proc", "/sys"} {
		if err := unix.Mount(d, newRootDir+d, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("move %s: %w", d, err)
		}
	}
	if err := unix.Chdir(newRootDir); err != nil {
		return err
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	return unix.Chdir("/")
}

func mountLate(s *spec) error {
	type m struct {
		src, dst, fs string
		flags        uintptr
		data         string
	}
	for _, x := range []m{
		{"tmpfs", "/run", "tmpfs", 0, "mode=755"},
		{"devpts", "/dev/pts", "devpts", 0, "newinstance,ptmxmode=0666"},
		{"tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777"},
		{"tracefs", "/sys/kernel/tracing", "tracefs", 0, ""},
		{"debugfs", "/sys/kernel/debug", "debugfs", 0, ""},
		{"bpf", "/sys/fs/bpf", "bpf", 0, ""},
		{"cgroup2", "/sys/fs/cgroup", "cgroup2", 0, ""},
	} {
		os.MkdirAll(x.dst, 0o755)
		if err := unix.Mount(x.src, x.dst, x.fs, x.flags, x.data); err != nil {
			return fmt.Errorf("mount %s on %s: %w", x.fs, x.dst, err)
		}
	}
	for _, sh := range s.Shares {
		if err := os.MkdirAll(sh.Path, 0o755); err != nil {
			return fmt.Errorf("share %s: %w", sh.Path, err)
		}
		var flags uintptr
		opts := opts9pRW
		if sh.ReadOnly {
			flags, opts = unix.MS_RDONLY, opts9pRO
		}
		if err := unix.Mount(sh.Tag, sh.Path, "9p", flags, opts); err != nil {
			return fmt.Errorf("mount share %s on %s: %w", sh.Tag, sh.Path, err)
		}
	}
	// The guest kernel's module tree, where modprobe and the kernel's
	// on-demand loading look for it (after the shares: it may be in one).
	if s.ModulesDir != "" {
		dst := filepath.Join("/lib/modules", s.Release)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return fmt.Errorf("module tree: %w", err)
		}
		if err := unix.Mount(s.ModulesDir, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", s.ModulesDir, dst, err)
		}
	}
	return nil
}

func setupNet(name string) error {
	host := "kqvm"
	if name != "" {
		host += "-" + name
	}
	unix.Sethostname([]byte(host))
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags of lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

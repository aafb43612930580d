//go:build linux

package counters

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// End is one end of the measured path: a device in a network namespace.
type End struct {
	// Name labels the end in results, e.g. "client" or "server".
	Name string
	// Ifname is the device whose packets are counted, e.g. "kqb0".
	Ifname string
	// Do runs fn on a thread inside the end's network namespace (for
	// example (*netns.NS).Do). Nil: the calling thread's namespace.
	Do func(fn func() error) error
}

// Options says what Start counts.
type Options struct {
	// Ends are the devices (and their namespaces) to report. Syscalls and
	// /proc/net counters are reported per end's namespace too.
	Ends []End
	// PID is the process (tgid) whose syscalls are counted; 0 counts none.
	PID int
	// NoBPF skips the eBPF counters (only the /proc counters are read).
	NoBPF bool
}

// Set is a running set of counters, from Start to Stop.
type Set struct {
	opts    Options
	ends    []endInfo
	maps    map[string]*ebpf.Map
	progs   []*ebpf.Program
	links   []link.Link
	missing map[string]string
	offs    *offsets
	stopped bool
	mu      sync.Mutex
	window  *ebpf.Map // windowValue at key 0
	// windowed is set by Begin: the result is epoch 1 (the window) only.
	windowed, ended bool
	began           uint64         // the window's begin (CLOCK_MONOTONIC ns)
	procWG          sync.WaitGroup // /proc/net reads waiting for an instant
	errs            []error
}

type endInfo struct {
	End
	ifindex int
	inum    uint32
	files   *procSet         // the /proc/net files, opened in the end's namespace
	proc    map[string]int64 // baseline
	procErr map[string]string
	procEnd map[string]int64 // at End (nil: read at Stop)
}

// The map names: one map per program (rx and gro share rxProgram).
const (
	mapXmit    = "xmit"
	mapRx      = "rx"
	mapGRO     = "gro"
	mapDrop    = "drop"
	mapSyscall = "syscalls"
)

// Start resolves each end's device and namespace, reads the /proc/net
// baselines, and attaches the eBPF programs. A counter that cannot run is
// recorded in Result.Missing with the reason; Start fails only when an end
// cannot be resolved at all.
func Start(opts Options) (*Set, error) {
	s := &Set{opts: opts, maps: map[string]*ebpf.Map{}, missing: map[string]string{}}
	for _, e := range opts.Ends {
		ei := endInfo{End: e}
		err := do(e.Do, func() error {
			ifi, err := net.InterfaceByName(e.Ifname)
			if err != nil {
				return fmt.Errorf("counters: end %s: device %s: %w (is the topology up and the namespace right?)", e.Name, e.Ifname, err)
			}
			ei.ifindex = ifi.Index
			if ei.inum, err = threadNetns(); err != nil {
				return fmt.Errorf("counters: end %s: %w", e.Name, err)
			}
			ei.files, ei.procErr = openProc()
			ei.proc = ei.files.read()
			return nil
		})
		if err != nil {
			s.closeProc()
			return nil, err
		}
		s.ends = append(s.ends, ei)
	}
	if opts.NoBPF {
		s.missAll("disabled (NoBPF)")
		return s, nil
	}
	if err := s.attach(); err != nil {
		s.close()
		s.missAll(err.Error())
	}
	return s, nil
}

func do(f func(func() error) error, fn func() error) error {
	if f == nil {
		return fn()
	}
	return f(fn)
}

// threadNetns is the inode number of the calling thread's network namespace
// (what the kernel calls net->ns.inum).
func threadNetns() (uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return 0, fmt.Errorf("network namespace of this thread: %w", err)
	}
	return uint32(st.Ino), nil
}

// bpfCounters are the names in Missing for the eBPF counters.
var bpfCounters = []string{"tx", "rx", "gro", "drops", "syscalls"}

func (s *Set) missAll(why string) {
	for _, c := range bpfCounters {
		if _, ok := s.missing[c]; !ok {
			s.missing[c] = why
		}
	}
	if s.opts.PID == 0 {
		s.missing["syscalls"] = "no process to count (Options.PID is 0)"
	}
}

// attach loads and attaches the programs. An error means none of them run.
func (s *Set) attach() error {
	if os.Geteuid() != 0 {
		return errors.New("eBPF needs root (CAP_BPF and CAP_PERFMON): run kqbench as root")
	}
	o, err := loadOffsets()
	if err != nil {
		return err
	}
	s.offs = o
	s.window, err = ebpf.NewMap(&ebpf.MapSpec{
		Name: "kqb_window", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1,
	})
	if err != nil {
		return fmt.Errorf("create BPF map window: %w", err)
	}
	wfd := s.window.FD()
	for _, name := range []string{mapXmit, mapRx, mapGRO, mapDrop, mapSyscall} {
		ks := uint32(keySize)
		if name == mapDrop {
			ks = dropKeySize
		}
		m, err := ebpf.NewMap(&ebpf.MapSpec{
			Name: "kqb_" + name, Type: ebpf.Hash,
			KeySize: ks, ValueSize: valueSize, MaxEntries: 4096,
		})
		if err != nil {
			return fmt.Errorf("create BPF map %s: %w", name, err)
		}
		s.maps[name] = m
	}
	type tp struct {
		counter, tracepoint string
		insns               asm.Instructions
	}
	tps := []tp{
		{"tx", "net_dev_start_xmit", xmitProgram(o, s.maps[mapXmit].FD(), wfd)},
		{"rx", "netif_receive_skb", rxProgram(o, s.maps[mapRx].FD(), wfd)},
		{"gro", "napi_gro_receive_entry", rxProgram(o, s.maps[mapGRO].FD(), wfd)},
		{"drops", "kfree_skb", dropProgram(o, s.maps[mapDrop].FD(), wfd)},
	}
	switch {
	case s.opts.PID == 0:
		s.missing["syscalls"] = "no process to count (Options.PID is 0)"
	case o.regsNrErr != nil:
		s.missing["syscalls"] = o.regsNrErr.Error()
	default:
		tps = append(tps, tp{"syscalls", "sys_exit", syscallProgram(o, s.maps[mapSyscall].FD(), wfd, uint32(s.opts.PID))})
	}
	attached := 0
	for _, t := range tps {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "kqb_" + t.counter, Type: ebpf.RawTracepoint,
			Instructions: t.insns, License: "GPL",
		})
		if err != nil {
			s.missing[t.counter] = fmt.Sprintf("load BPF program for %s: %v", t.tracepoint, err)
			continue
		}
		s.progs = append(s.progs, prog)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: t.tracepoint, Program: prog})
		if err != nil {
			s.missing[t.counter] = fmt.Sprintf("attach raw tracepoint %s: %v", t.tracepoint, err)
			continue
		}
		s.links = append(s.links, l)
		attached++
	}
	if attached == 0 {
		return errors.New("no BPF program could be attached (see the per-counter reasons)")
	}
	return nil
}

// close detaches and frees the BPF objects; it is idempotent.
func (s *Set) close() error {
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	s.links = nil
	for _, p := range s.progs {
		errs = append(errs, p.Close())
	}
	s.progs = nil
	for k, m := range s.maps {
		errs = append(errs, m.Close())
		delete(s.maps, k)
	}
	if s.window != nil {
		errs = append(errs, s.window.Close())
		s.window = nil
	}
	return errors.Join(errs...)
}

func (s *Set) closeProc() {
	for i := range s.ends {
		s.ends[i].files.close()
	}
}

// Stop detaches the programs, reads the counts and the /proc/net deltas and
// frees every BPF object. It may be called once.
func (s *Set) Stop() (Result, error) {
	s.procWG.Wait() // the /proc/net reads set for the window's instants
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return Result{}, errors.New("counters: Stop called twice")
	}
	s.stopped = true
	// Detach first, so the maps hold exactly the interval's counts.
	var errs []error
	for _, l := range s.links {
		errs = append(errs, l.Close())
	}
	s.links = nil
	res := Result{Missing: map[string]string{}}
	for k, v := range s.missing {
		res.Missing[k] = v
	}
	dumps := map[string]map[mapKey]mapValue{}
	var drops map[dropKey]mapValue
	for name, m := range s.maps {
		if name == mapDrop {
			d, err := dumpDrops(m, s.windowed)
			if err != nil {
				errs = append(errs, fmt.Errorf("read BPF map %s: %w", name, err))
			}
			drops = d
			continue
		}
		d, err := dump(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("read BPF map %s: %w", name, err))
			continue
		}
		dumps[name] = d
	}
	dumps = inWindow(dumps, s.windowed)
	sites := s.dropSites(drops, res.Missing)
	errs = append(errs, s.errs...)
	for _, e := range s.ends {
		er := EndResult{Name: e.Name, Ifname: e.Ifname, Ifindex: e.ifindex, NetnsInode: e.inum}
		er.fill(dumps, s.offs)
		er.fillDrops(drops, s.offs, sites)
		now := e.procEnd
		if now == nil {
			now = e.files.read()
		}
		er.Proc = procDelta(e.proc, now)
		for k, v := range e.procErr {
			res.Missing[e.Name+"."+k] = v
		}
		res.Ends = append(res.Ends, er)
	}
	errs = append(errs, s.close())
	s.closeProc()
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("counters: stop: %w", err)
	}
	return res, nil
}

func dump(m *ebpf.Map) (map[mapKey]mapValue, error) {
	out := map[mapKey]mapValue{}
	var k mapKey
	var v mapValue
	it := m.Iterate()
	for it.Next(&k, &v) {
		out[k] = v
	}
	return out, it.Err()
}

//go:build linux

package counters

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
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
	if s.opts.PID != 0 {
		tps = append(tps, tp{"syscalls", "sys_enter", syscallProgram(o, s.maps[mapSyscall].FD(), wfd, uint32(s.opts.PID))})
	} else {
		s.missing["syscalls"] = "no process to count (Options.PID is 0)"
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

// monotonic is CLOCK_MONOTONIC in ns, bpf_ktime_get_ns's clock.
func monotonic() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// Begin opens the window the result covers at the time at (which may be
// ahead: the runner gives every probe the same instants): the eBPF
// counters count events from then by the kernel's clock (what was counted
// from Start is left out; attaching is slow under emulation), and the
// /proc/net baselines are read at that instant. Without Begin, the result
// covers Start to Stop. Begin is quick: it writes one map entry, and reads
// the /proc/net files (opened in Start) at once only if at has passed.
func (s *Set) Begin(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.windowed {
		return
	}
	s.windowed = true
	if s.window != nil {
		s.began = monotonicAt(at)
		s.setWindow(windowValue{Begin: s.began}, "open")
	}
	s.procAt(at, func(e *endInfo, v map[string]int64) {
		if v != nil {
			e.proc = v
		}
	})
}

// procAt reads every end's /proc/net counters at the time at and hands
// them to store: at once if at has passed, else from a timer, which Stop
// waits for. Call with s.mu held.
func (s *Set) procAt(at time.Time, store func(e *endInfo, v map[string]int64)) {
	read := func() {
		for i := range s.ends {
			store(&s.ends[i], s.ends[i].files.read())
		}
	}
	d := time.Until(at)
	if d <= 0 {
		read()
		return
	}
	s.procWG.Add(1)
	time.AfterFunc(d, func() {
		defer s.procWG.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.stopped {
			read()
		}
	})
}

// setWindow writes the window map, and notes it in the result if the
// instant it sets had already passed (events then fell on the wrong side).
func (s *Set) setWindow(w windowValue, what string) {
	if err := s.window.Put(uint32(0), w); err != nil {
		s.errs = append(s.errs, fmt.Errorf("counters: %s the window: %w", what, err))
		return
	}
	at := w.Begin
	if w.End != 0 {
		at = w.End
	}
	if late := time.Duration(monotonic() - at); late >= time.Millisecond && late < time.Hour {
		s.missing["window"] = fmt.Sprintf("the window was set to %s %v after it did (this process was not run in time): counts near its edges may be off", what, late.Round(time.Millisecond))
	}
}

// End closes the window at the time at: what happens after it is left
// out; the /proc/net counters are read at that instant too. Without End,
// the window runs until Stop.
func (s *Set) End(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || !s.windowed || s.ended {
		return
	}
	s.ended = true
	if s.window != nil {
		s.setWindow(windowValue{Begin: s.began, End: monotonicAt(at)}, "close")
	}
	s.procAt(at, func(e *endInfo, v map[string]int64) { e.procEnd = v })
}

// monotonicAt is the time at on CLOCK_MONOTONIC, in ns.
func monotonicAt(at time.Time) uint64 {
	return uint64(int64(monotonic()) + int64(time.Until(at)))
}

// inWindow keeps the window's entries (epoch 1) when Begin was called,
// else all of them, summed over epochs.
func inWindow(dumps map[string]map[mapKey]mapValue, windowed bool) map[string]map[mapKey]mapValue {
	out := map[string]map[mapKey]mapValue{}
	for name, d := range dumps {
		od := map[mapKey]mapValue{}
		for k, v := range d {
			if windowed && k.Epoch != epochIn {
				continue
			}
			k.Epoch = 0
			sum := od[k]
			od[k] = mapValue{Count: sum.Count + v.Count, Bytes: sum.Bytes + v.Bytes}
		}
		out[name] = od
	}
	return out
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

// Result is what a Set counted between Start and Stop.
type Result struct {
	// Ends holds one entry per Options.Ends, in order.
	Ends []EndResult
	// Missing names each counter that was not counted, with the reason.
	// Keys: "tx", "rx", "gro", "drops", "syscalls" for the eBPF counters,
	// "drops.where" when the drops' functions could not be named,
	// "<end>.snmp", "<end>.quic", "<end>.tls" for the /proc/net files.
	Missing map[string]string
}

// EndResult is the counts of one end.
type EndResult struct {
	Name       string
	Ifname     string
	Ifindex    int
	NetnsInode uint32

	// TxPackets and TxBytes count net_dev_start_xmit on the device (a GSO
	// super-packet counts once, with its full length).
	TxPackets, TxBytes uint64
	// TxSizes is the histogram of the transmitted skb lengths (the frame,
	// link-layer header included: 1514 bytes for a full frame at MTU
	// 1500), bucketed by SizeBounds (one more bucket for larger ones).
	TxSizes []uint64
	// TxL3Sizes is the same histogram of the network-layer length (the
	// IP packet, what the MTU bounds: 1500 at MTU 1500), so that a full
	// frame (le1500) and a two-segment super-packet (le3000) part.
	TxL3Sizes []uint64
	// TxSegs is the histogram of segments per transmitted packet
	// (gso_segs; 1 for a packet that is not a super-packet), bucketed by
	// SegBounds.
	TxSegs []uint64
	// RxPackets and RxBytes count netif_receive_skb on the device.
	RxPackets, RxBytes uint64
	// GROPackets counts napi_gro_receive_entry on the device (veth only
	// uses NAPI with XDP or GRO enabled, so usually 0).
	GROPackets uint64
	// Drops counts kfree_skb of packets whose device is in this end's
	// namespace, by drop reason (e.g. "SOCKET_RCVBUFF", "NOT_SPECIFIED").
	Drops map[string]uint64
	// DropsAt counts the same drops by reason and the kernel function
	// that freed the packet ("NOT_SPECIFIED@quic_packet_rcv"), where
	// /proc/kallsyms names it; DropSites has each place in full.
	DropsAt   map[string]uint64
	DropSites []DropSite
	// Syscalls counts the syscalls the process made from threads in this
	// end's namespace, by name ("sendmsg", "nr_123" for unnamed ones).
	Syscalls map[string]uint64
	// Proc holds the deltas of /proc/net/snmp ("Udp.RcvbufErrors"),
	// /proc/net/quic/snmp ("Quic.<name>") and /proc/net/tls_stat
	// ("Tls.<name>") in this end's namespace.
	Proc map[string]int64
}

func (er *EndResult) fill(d map[string]map[mapKey]mapValue, o *offsets) {
	er.TxSizes = make([]uint64, len(SizeBounds)+1)
	er.TxL3Sizes = make([]uint64, len(SizeBounds)+1)
	er.TxSegs = make([]uint64, len(SegBounds)+1)
	er.Syscalls = map[string]uint64{}
	dev := func(k mapKey) bool { return k.Inum == er.NetnsInode && int(k.Ifindex) == er.Ifindex }
	for k, v := range d[mapXmit] {
		if dev(k) {
			er.TxPackets += v.Count
			er.TxBytes += v.Bytes
			link, l3, segs := auxBuckets(k.Aux)
			if link < len(er.TxSizes) {
				er.TxSizes[link] += v.Count
			}
			if l3 < len(er.TxL3Sizes) {
				er.TxL3Sizes[l3] += v.Count
			}
			if segs < len(er.TxSegs) {
				er.TxSegs[segs] += v.Count
			}
		}
	}
	for k, v := range d[mapRx] {
		if dev(k) {
			er.RxPackets += v.Count
			er.RxBytes += v.Bytes
		}
	}
	for k, v := range d[mapGRO] {
		if dev(k) {
			er.GROPackets += v.Count
		}
	}
	for k, v := range d[mapSyscall] {
		if k.Inum == er.NetnsInode {
			er.Syscalls[syscallName(k.Aux)] += v.Count
		}
	}
}

// Flat turns the result into "<end>.<counter>" numbers, e.g.
// "client.tx_packets", "server.syscall.recvmsg", "server.proc.Udp.RcvbufErrors",
// "client.tx_size.le3000" (frames with their link-layer header),
// "client.tx_l3.le1500" (IP packets), "client.tx_segs.2" (segments per
// packet), "server.drop.SOCKET_RCVBUFF" and, by the
// function that dropped, "server.drop.SOCKET_RCVBUFF@__udp_enqueue_schedule_skb"
// (these add up to the reason's count where every place was named).
// Counters that were not counted are absent (see Missing).
func (r Result) Flat() map[string]float64 {
	out := map[string]float64{}
	for _, e := range r.Ends {
		p := e.Name + "."
		if _, miss := r.Missing["tx"]; !miss {
			out[p+"tx_packets"] = float64(e.TxPackets)
			out[p+"tx_bytes"] = float64(e.TxBytes)
			for i, n := range e.TxSizes {
				out[p+"tx_size."+bucketName(i)] = float64(n)
			}
			for i, n := range e.TxL3Sizes {
				out[p+"tx_l3."+bucketName(i)] = float64(n)
			}
			for i, n := range e.TxSegs {
				out[p+"tx_segs."+segBucketName(i)] = float64(n)
			}
		}
		if _, miss := r.Missing["rx"]; !miss {
			out[p+"rx_packets"] = float64(e.RxPackets)
			out[p+"rx_bytes"] = float64(e.RxBytes)
		}
		if _, miss := r.Missing["gro"]; !miss {
			out[p+"gro_packets"] = float64(e.GROPackets)
		}
		if _, miss := r.Missing["drops"]; !miss {
			var total uint64
			for k, n := range e.Drops {
				out[p+"drop."+k] = float64(n)
				total += n
			}
			for k, n := range e.DropsAt {
				out[p+"drop."+k] = float64(n)
			}
			out[p+"drops"] = float64(total)
		}
		if _, miss := r.Missing["syscalls"]; !miss {
			var total uint64
			for k, n := range e.Syscalls {
				total += n
				if _, named := syscallNames[k]; named {
					out[p+"syscall."+k] = float64(n)
				}
			}
			for k := range syscallNames {
				if _, ok := out[p+"syscall."+k]; !ok {
					out[p+"syscall."+k] = 0
				}
			}
			out[p+"syscalls"] = float64(total)
		}
		for k, n := range e.Proc {
			if n != 0 || alwaysProc[k] {
				out[p+"proc."+k] = float64(n)
			}
		}
	}
	return out
}

// PerMB divides every counter of r.Flat() by the megabytes (1e6 bytes) of
// application payload delivered, so cells of different speeds compare:
// "client.syscall.sendmsg" becomes sendmsg calls per MB delivered. With
// bytesDelivered 0 it returns nil.
func PerMB(r Result, bytesDelivered int64) map[string]float64 {
	if bytesDelivered <= 0 {
		return nil
	}
	mb := float64(bytesDelivered) / 1e6
	out := map[string]float64{}
	for k, v := range r.Flat() {
		out[k] = v / mb
	}
	return out
}

// MissingList renders Missing as sorted "counter: reason" lines.
func (r Result) MissingList() []string {
	var out []string
	for k, v := range r.Missing {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

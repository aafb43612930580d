//go:build linux

package kcov

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoKCOV is returned where the running kernel has no KCOV.
var ErrNoKCOV = errors.New("kcov: the kernel has no KCOV (no /sys/kernel/debug/kcov: boot a kernel built with CONFIG_KCOV, with debugfs mounted; scripts/kcov-kernel builds one)")

// Path is KCOV's control file.
var Path = "/sys/kernel/debug/kcov"

// The ioctls of include/uapi/linux/kcov.h.
const (
	ioctlInitTrace = 0x80086301 // _IOR('c', 1, unsigned long)
	ioctlEnable    = 0x6364     // _IO('c', 100)
	modeTracePC    = 0          // KCOV_TRACE_PC
)

// Defaults of [Start].
const (
	// DefaultThreads is the number of threads traced: well above what a Go
	// program doing blocking socket calls on a few goroutines runs on.
	DefaultThreads = 48
	// DefaultWords is each thread's buffer, in addresses: 512 KiB.
	DefaultWords = 1 << 16
)

// Available reports whether the kernel has KCOV, wrapping [ErrNoKCOV] if not.
func Available() error {
	if _, err := os.Stat(Path); err != nil {
		return fmt.Errorf("%w: %v", ErrNoKCOV, err)
	}
	return nil
}

// area is one KCOV descriptor and its mapped buffer: word 0 counts the
// addresses that follow.
type area struct {
	fd    int
	mem   []byte
	words []uint64
	tid   int    // the thread it traces
	read  uint64 // the addresses up to words[read] are counted
}

func newArea(words int) (*area, error) {
	fd, err := unix.Open(Path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, ErrNoKCOV
		}
		return nil, fmt.Errorf("kcov: open %s: %w", Path, err)
	}
	if err := unix.IoctlSetInt(fd, ioctlInitTrace, words); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("kcov: KCOV_INIT_TRACE: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, words*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("kcov: mmap the trace buffer: %w", err)
	}
	return &area{fd: fd, mem: mem, words: unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), words)}, nil
}

// Tracer collects the KCOV trace of this process's threads. There is one per
// process: a thread, once traced, stays traced by the same descriptor until
// it exits.
type Tracer struct {
	words int

	mu        sync.Mutex
	areas     []*area // enabled, one per traced thread
	spare     []*area // initialised, not enabled
	hits      map[uint64]uint64
	traced    map[int]bool // thread IDs
	overflows int
	missed    int
}

var (
	globalMu sync.Mutex
	global   *Tracer
)

// Start traces this process's threads: threads of them (0: DefaultThreads)
// at once, with buffers of words addresses (0: DefaultWords). Call it early,
// before the program has threads busy elsewhere. Called again, it returns
// the same tracer, after tracing as many threads again (those made since
// among them).
func Start(threads, words int) (*Tracer, error) {
	if threads <= 0 {
		threads = DefaultThreads
	}
	if words <= 0 {
		words = DefaultWords
	}
	globalMu.Lock()
	defer globalMu.Unlock()
	if global == nil {
		if err := Available(); err != nil {
			return nil, err
		}
		global = &Tracer{words: words, hits: map[uint64]uint64{}, traced: map[int]bool{}}
	}
	if _, err := global.capture(threads); err != nil {
		return nil, err
	}
	return global, nil
}

// capture wires n goroutines to n threads at once and enables a descriptor
// on each thread not yet traced; it returns how many it enabled.
func (t *Tracer) capture(n int) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.spare) < n {
		a, err := newArea(t.words)
		if err != nil {
			return 0, err
		}
		t.spare = append(t.spare, a)
	}
	type result struct {
		a   *area
		err error
	}
	var locked sync.WaitGroup
	release := make(chan struct{})
	results := make(chan result, n)
	locked.Add(n)
	for _, a := range t.spare[:n] {
		go func() {
			runtime.LockOSThread()
			a.tid = unix.Gettid()
			err := unix.IoctlSetInt(a.fd, ioctlEnable, modeTracePC)
			locked.Done()
			// Held until every goroutine has a thread of its own.
			<-release
			runtime.UnlockOSThread()
			results <- result{a, err}
		}()
	}
	locked.Wait()
	close(release)
	enabled := 0
	var spare []*area
	var firstErr error
	for range n {
		r := <-results
		switch {
		case r.err == nil:
			t.areas = append(t.areas, r.a)
			t.traced[r.a.tid] = true
			enabled++
		case errors.Is(r.err, unix.EBUSY):
			spare = append(spare, r.a) // a thread traced already
		default:
			spare = append(spare, r.a)
			if firstErr == nil {
				firstErr = fmt.Errorf("kcov: KCOV_ENABLE: %w", r.err)
			}
		}
	}
	t.spare = append(spare, t.spare[n:]...)
	if enabled == 0 && firstErr != nil {
		return 0, firstErr
	}
	return enabled, nil
}

// Run makes the call f on a traced thread: it wires the goroutine to its
// thread for the call and traces the thread first if it is not yet. The
// pool [Start] traces covers the threads the program had; Run covers the
// calls that matter whichever thread the scheduler gives them (the
// runtime's network poller thread, say, which sleeps in epoll_wait while
// the pool is made). A thread it cannot trace (no memory for a buffer)
// runs f untraced, counted in Missed.
func (t *Tracer) Run(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t.ensure()
	f()
}

// ensure traces the current thread, wired to its goroutine.
func (t *Tracer) ensure() {
	tid := unix.Gettid()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.traced[tid] {
		return
	}
	var a *area
	if n := len(t.spare); n > 0 {
		a, t.spare = t.spare[n-1], t.spare[:n-1]
	} else {
		var err error
		if a, err = newArea(t.words); err != nil {
			t.missed++
			return
		}
	}
	if err := unix.IoctlSetInt(a.fd, ioctlEnable, modeTracePC); err != nil {
		t.spare = append(t.spare, a)
		t.missed++
		return
	}
	a.tid = tid
	t.areas = append(t.areas, a)
	t.traced[tid] = true
}

// Missed counts the calls [Tracer.Run] made on a thread it could not
// trace.
func (t *Tracer) Missed() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.missed
}

// Collect takes the addresses the traced threads recorded since the last
// call into the tracer's counts.
func (t *Tracer) Collect() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.areas {
		t.drain(a)
	}
}

// drain counts an area's new addresses and resets the buffer, unless the
// thread appended meanwhile: then it reads on, and after a few rounds
// leaves the rest to the next call. Each address the kernel records is
// counted once.
func (t *Tracer) drain(a *area) {
	count := (*uint64)(unsafe.Pointer(&a.words[0]))
	for range 8 {
		n := atomic.LoadUint64(count)
		if n >= uint64(len(a.words)-1) {
			n = uint64(len(a.words) - 1)
			t.overflows++
		}
		for i := a.read + 1; i <= n; i++ {
			t.hits[atomic.LoadUint64(&a.words[i])]++
		}
		if n < a.read {
			n = a.read // cannot happen: only we reset it
		}
		a.read = n
		if atomic.CompareAndSwapUint64(count, n, 0) {
			a.read = 0
			return
		}
	}
}

// PCs returns the distinct addresses collected so far, sorted, as KCOV
// recorded them (without the kernel's KASLR offset).
func (t *Tracer) PCs() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]uint64, 0, len(t.hits))
	for pc := range t.hits {
		out = append(out, pc)
	}
	slices.Sort(out)
	return out
}

// Hits returns how many times each address was recorded so far.
func (t *Tracer) Hits() map[uint64]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.hits)
}

// Reset forgets the addresses collected so far (those recorded since the
// last Collect too).
func (t *Tracer) Reset() {
	t.Collect()
	t.mu.Lock()
	clear(t.hits)
	t.overflows = 0
	t.mu.Unlock()
}

// Threads returns how many of the process's threads are traced, and how
// many it has. The runtime's monitor thread (sysmon) runs no goroutine,
// so one thread at least is never traced.
func (t *Tracer) Threads() (traced, all int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tids := threads()
	for _, a := range t.areas {
		if tids[a.tid] {
			traced++
		}
	}
	return traced, len(tids)
}

// Overflows counts the collections that found a buffer full (the kernel
// drops what does not fit: collect more often, or start with more words).
func (t *Tracer) Overflows() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.overflows
}

// threads are the process's thread IDs.
func threads() map[int]bool {
	out := map[int]bool{}
	ents, _ := os.ReadDir("/proc/self/task")
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			out[id] = true
		}
	}
	return out
}

// Trace is what the tracer collected in the module laid out as l (read
// with [ModuleLayout] while it was loaded), for [Symbolize].
func (t *Tracer) Trace(l *Layout) *Trace {
	t.Collect()
	traced, all := t.Threads()
	tr := &Trace{Layout: *l, ThreadsTraced: traced, Threads: all, Overflows: t.Overflows(), Missed: t.Missed()}
	// The module's addresses only (a kernel built with
	// KCOV_INSTRUMENT_ALL records its own too): those from its first
	// function to 64 KiB past the start of its last.
	hits := t.Hits()
	for _, pc := range t.PCs() {
		if pc+l.KASLROffset >= l.TextLow && pc+l.KASLROffset < l.TextHigh+64<<10 {
			tr.PCs = append(tr.PCs, pc)
			tr.Counts = append(tr.Counts, hits[pc])
		} else {
			tr.Outside++
		}
	}
	return tr
}

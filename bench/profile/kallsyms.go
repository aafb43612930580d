package profile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// kallsyms is the kernel's text symbols by address (/proc/kallsyms), the
// image's and the loaded modules', read after a recording while the
// modules it saw are still loaded: it names the frames perf could not.
// perf maps a module by its load address in /proc/modules and ends the map
// at the next module's; where that goes wrong (modules whose text lies
// elsewhere than their listed address, or loaded after perf started) it
// puts a module's frames under another's name, unnamed: a loaded guest gave
// every frame of the QUIC module as "[nfsv4]".
type kallsyms struct {
	addr []uint64
	name []string // "quic_packet_rcv" (a module's symbols as the kernel names them)
}

// readKallsyms reads /proc/kallsyms's "address type name [module]" lines,
// keeping the text symbols (t, T, w, W).
func readKallsyms(r io.Reader) (*kallsyms, error) {
	type sym struct {
		a uint64
		n string
	}
	var syms []sym
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		switch f[1] {
		case "t", "T", "w", "W":
		default:
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("kallsyms: %q: %w", sc.Text(), err)
		}
		if a == 0 {
			continue // addresses hidden (kptr_restrict, not root)
		}
		syms = append(syms, sym{a, f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kallsyms: %w", err)
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].a < syms[j].a })
	k := &kallsyms{addr: make([]uint64, len(syms)), name: make([]string, len(syms))}
	for i, s := range syms {
		k.addr[i], k.name[i] = s.a, s.n
	}
	return k, nil
}

// loadKallsyms reads /proc/kallsyms; nil when it cannot (the frames then
// keep perf's names).
func loadKallsyms() *kallsyms {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	k, err := readKallsyms(f)
	if err != nil || len(k.addr) == 0 {
		return nil
	}
	return k
}

// maxSymbolSize bounds how far past a symbol's address a frame is taken
// for that symbol: beyond it the address lies in no known function.
const maxSymbolSize = 1 << 20

// lookup names the function holding addr: the text symbol at or below it.
func (k *kallsyms) lookup(addr uint64) (string, bool) {
	if k == nil {
		return "", false
	}
	i := sort.Search(len(k.addr), func(i int) bool { return k.addr[i] > addr }) - 1
	if i < 0 || addr-k.addr[i] >= maxSymbolSize {
		return "", false
	}
	return k.name[i], true
}

//go:build linux

package counters

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
)

// Site is a kernel text address named by /proc/kallsyms: the function it
// is in, the module that function belongs to ("" for the kernel image),
// and the offset into it.
type Site struct {
	Func, Module string
	Offset       uint64
}

// String is "func+0x1a [module]" or "func+0x1a".
func (s Site) String() string {
	if s.Module != "" {
		return fmt.Sprintf("%s+%#x [%s]", s.Func, s.Offset, s.Module)
	}
	return fmt.Sprintf("%s+%#x", s.Func, s.Offset)
}

// kallsymsPath is the kernel's symbol table (module symbols included once
// a module is loaded).
const kallsymsPath = "/proc/kallsyms"

// symCache keeps the sites found, valid while /proc/modules reads the same
// (a module loaded or unloaded moves the module symbols).
var symCache struct {
	sync.Mutex
	modules []byte
	sites   map[uint64]Site
}

// resolveSites names each address by the text symbol at or below it in
// /proc/kallsyms. Addresses no text symbol covers are left out. It fails
// when kallsyms cannot be read or hides its addresses (kernel.kptr_restrict,
// or not root).
func resolveSites(addrs []uint64) (map[uint64]Site, error) {
	mods, _ := os.ReadFile("/proc/modules")
	symCache.Lock()
	defer symCache.Unlock()
	if symCache.sites == nil || !bytes.Equal(mods, symCache.modules) {
		symCache.sites, symCache.modules = map[uint64]Site{}, mods
	}
	out := map[uint64]Site{}
	var todo []uint64
	for _, a := range addrs {
		if s, ok := symCache.sites[a]; ok {
			out[a] = s
		} else if a != 0 {
			todo = append(todo, a)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	found, err := scanKallsyms(kallsymsPath, todo)
	if err != nil {
		return out, err
	}
	for a, s := range found {
		symCache.sites[a] = s
		out[a] = s
	}
	return out, nil
}

// scanKallsyms reads the symbol file once, keeping for each address the
// highest text symbol ("t", "T", "w", "W") at or below it.
func scanKallsyms(path string, addrs []uint64) (map[uint64]Site, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("drop locations: %w", err)
	}
	defer f.Close()
	type best struct {
		at        uint64
		name, mod []byte
		found     bool
	}
	bests := make([]best, len(addrs))
	nonzero := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		// "ffffffff81000000 T _stext" or "ffffffffc0a01000 t quic_rcv\t[quic]"
		sp := bytes.IndexByte(line, ' ')
		if sp != 16 || len(line) < sp+4 {
			continue
		}
		switch line[sp+1] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		at, err := strconv.ParseUint(string(line[:sp]), 16, 64)
		if err != nil {
			continue
		}
		if at == 0 {
			continue
		}
		nonzero = true
		rest := line[sp+3:]
		name, mod := rest, []byte(nil)
		if i := bytes.IndexAny(rest, " \t"); i >= 0 {
			name = rest[:i]
			if j := bytes.IndexByte(rest[i:], '['); j >= 0 {
				mod = bytes.TrimRight(rest[i+j+1:], "]")
			}
		}
		for i, a := range addrs {
			if at <= a && (!bests[i].found || at > bests[i].at) {
				bests[i] = best{at: at, name: append(bests[i].name[:0], name...), mod: append(bests[i].mod[:0], mod...), found: true}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("drop locations: read %s: %w", path, err)
	}
	if !nonzero {
		return nil, errors.New("drop locations: " + path + " shows no addresses (kernel.kptr_restrict, or not root)")
	}
	out := map[uint64]Site{}
	for i, a := range addrs {
		if b := bests[i]; b.found {
			out[a] = Site{Func: string(b.name), Module: string(b.mod), Offset: a - b.at}
		}
	}
	return out, nil
}

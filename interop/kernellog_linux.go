package interop

import (
	"os"
	"path/filepath"
	"strings"

	"kquic.dev/kmod"
)

// kernelLog is the kernel log of a case: the records written while it ran.
type kernelLog struct{ c *kmod.KmsgCursor }

// openKernelLog starts reading the kernel log, if on (a kernel end).
func openKernelLog(on bool) *kernelLog {
	if !on {
		return nil
	}
	return &kernelLog{c: kmod.OpenKmsg()}
}

// moduleWords mark a kernel log line as the QUIC module's, or as one a
// module bug leaves (a warning, an oops, a sanitizer's report).
var moduleWords = []string{"quic", "QUIC", "BUG:", "WARNING:", "Oops", "KASAN:", "UBSAN:", "kernel BUG", "general protection", "RIP:"}

// save writes every line to dir/kernel.log and returns the module's.
func (k *kernelLog) save(dir string) []string {
	if k == nil {
		return nil
	}
	defer k.c.Close()
	lines := k.c.Lines()
	if len(lines) > 0 {
		os.WriteFile(filepath.Join(dir, "kernel.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	var out []string
	for _, l := range lines {
		for _, w := range moduleWords {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	const max = 50 // the rest is in kernel.log
	if len(out) > max {
		out = append(out[:max], "…")
	}
	return out
}

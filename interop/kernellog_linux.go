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
	text := strings.Join(lines, "\n")
	if len(lines) > 0 {
		text += "\n"
	}
	os.WriteFile(filepath.Join(dir, "kernel.log"), []byte(text), 0o644)
	var out []string
	for _, l := range lines {
		if strings.Contains(l, "errcode: 0, frame: 0") {
			continue // a close without an error: every connection's end
		}
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

// moduleDebugFormats are the module's pr_debug lines that say why it ended
// a connection or threw a packet away (lxin/quic 03a9c7c: frame.c's close
// with its error code and frame type, a frame it could not process, a
// header it could not decrypt): few, where its per-packet lines are many.
var moduleDebugFormats = []string{"errcode", "invalid frame", "unknown frame", "failed, type", "decrypt err"}

// enableModuleDebug turns those lines on through dynamic debug, where the
// kernel has it and we may (root), and returns what turns them off again.
func enableModuleDebug() (undo func()) {
	const control = "/proc/dynamic_debug/control"
	set := func(flag string) error {
		for _, f := range moduleDebugFormats {
			if err := os.WriteFile(control, []byte("module quic format \""+f+"\" "+flag+"\n"), 0); err != nil {
				return err
			}
		}
		return nil
	}
	if set("+p") != nil {
		return func() {}
	}
	return func() { set("-p") }
}

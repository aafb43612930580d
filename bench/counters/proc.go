//go:build linux

package counters

import (
	"os"

	"kquic.dev/internal/procnet"
)

// procFiles are the per-namespace kernel counter files, read through
// /proc/thread-self: /proc/net is /proc/self/net, which follows the thread
// group leader's namespace, not that of a thread that entered another one.
var procFiles = []struct{ key, path, prefix string }{
	{"snmp", "/proc/thread-self/net/snmp", ""},
	{"quic", "/proc/thread-self/net/quic/snmp", "Quic."},
	{"tls", "/proc/thread-self/net/tls_stat", "Tls."},
}

// alwaysProc are reported even when their delta is zero, so cells have the
// same columns.
var alwaysProc = map[string]bool{
	"Udp.RcvbufErrors": true, "Udp.SndbufErrors": true, "Udp.InErrors": true,
	"Tcp.RetransSegs": true, "Tcp.InErrs": true,
}

// procSet is the counter files of one namespace, opened from a thread in
// it: a /proc/net file keeps the namespace it was opened in, so later reads
// need not enter the namespace again (and make few syscalls).
type procSet struct {
	files []*os.File
	pre   []string // prefix per file
	buf   []byte
}

// openProc opens every counter file of the calling thread's namespace.
// errs maps a file's key to why it could not be opened.
func openProc() (*procSet, map[string]string) {
	ps, errs := &procSet{}, map[string]string{}
	for _, f := range procFiles {
		fh, err := os.Open(f.path)
		if err != nil {
			why := err.Error()
			switch f.key {
			case "quic":
				why = "no " + f.path + " (the quic module is not loaded)"
			case "tls":
				why = "no " + f.path + " (the tls module is not loaded)"
			}
			errs[f.key] = why
			continue
		}
		ps.files = append(ps.files, fh)
		ps.pre = append(ps.pre, f.prefix)
	}
	return ps, errs
}

// read reads every open file from its start (nil: ps is nil).
func (ps *procSet) read() map[string]int64 {
	if ps == nil {
		return nil
	}
	vals := map[string]int64{}
	for i, f := range ps.files {
		ps.buf = ps.buf[:0]
		for off := int64(0); ; {
			if len(ps.buf) == cap(ps.buf) {
				ps.buf = append(ps.buf, make([]byte, 4096)...)[:len(ps.buf)]
			}
			n, err := f.ReadAt(ps.buf[len(ps.buf):cap(ps.buf)], off)
			ps.buf = ps.buf[:len(ps.buf)+n]
			off += int64(n)
			if err != nil || n == 0 {
				break
			}
		}
		for k, v := range procnet.ParseCounters(ps.buf) {
			vals[ps.pre[i]+k] = v
		}
	}
	return vals
}

func (ps *procSet) close() {
	if ps == nil {
		return
	}
	for _, f := range ps.files {
		f.Close()
	}
	ps.files = nil
}

// procDelta is now - base for every key in now.
func procDelta(base, now map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range now {
		d[k] = v - base[k]
	}
	return d
}

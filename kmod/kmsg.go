//go:build linux

package kmod

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// KmsgCursor reads the kernel log records written after it was opened, so an
// error can quote what the kernel said about it.
type KmsgCursor struct{ f *os.File }

// OpenKmsg positions a cursor at the end of the kernel log. It returns a
// cursor that yields nothing when /dev/kmsg cannot be read (no error: the log
// is a help for messages, not a requirement).
func OpenKmsg() *KmsgCursor {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return &KmsgCursor{}
	}
	if _, err := unix.Seek(fd, 0, 2 /* SEEK_END */); err != nil {
		unix.Close(fd)
		return &KmsgCursor{}
	}
	return &KmsgCursor{f: os.NewFile(uintptr(fd), "/dev/kmsg")}
}

// Lines returns the messages logged since the cursor was opened or last read.
func (c *KmsgCursor) Lines() []string {
	if c == nil || c.f == nil {
		return nil
	}
	var lines []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(int(c.f.Fd()), buf)
		if err != nil {
			if errors.Is(err, unix.EPIPE) { // overwritten records: keep reading
				continue
			}
			return lines
		}
		if n <= 0 {
			return lines
		}
		// "prio,seq,usec,flags[,...];message\n[ KEY=value\n]"
		rec := string(buf[:n])
		if _, msg, ok := strings.Cut(rec, ";"); ok {
			msg, _, _ = strings.Cut(msg, "\n")
			lines = append(lines, msg)
		}
	}
}

// Close releases the cursor.
func (c *KmsgCursor) Close() {
	if c != nil && c.f != nil {
		c.f.Close()
	}
}

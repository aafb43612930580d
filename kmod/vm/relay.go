//go:build linux

package vm

import (
	"errors"
	"os"
	"time"
)

// The relay's settings: how long one write to a port may wait before it is
// tried again, and how long the relays may take to pass on the output left
// when the command has ended.
const (
	relayRetry = time.Second
	relayDrain = 10 * time.Second
)

// relayTo returns the write end of a pipe for the command's output, and
// copies what comes out of it to port until every writer has closed it
// (done is closed then).
//
// The command does not write to the port itself: a program that writes in
// small pieces (a tabwriter's cells, 2 bytes each) fills the virtio console
// queue's 128 buffers with them, and a writer that found the queue full was
// seen asleep in the kernel's wait_port_writable for good while the host had
// read everything and qemu idled (issue 38). The relay reads what has piled
// up in the pipe, up to 32 KiB, and writes it as one buffer; and its writes
// do not wait on the driver's wake-up alone: each is tried again after
// relayRetry, which takes back the buffers the host has used.
func relayTo(port *os.File) (w *os.File, done <-chan struct{}, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	d := make(chan struct{})
	go func() {
		defer close(d)
		defer r.Close()
		buf := make([]byte, 32<<10) // the most a port takes in one write
		for {
			n, err := r.Read(buf)
			if n > 0 && !writePort(port, buf[:n]) {
				// The port is gone: keep draining, so the command is
				// not blocked on a full pipe.
				port = nil
			}
			if err != nil {
				return
			}
		}
	}()
	return w, d, nil
}

// writePort writes b to the port, trying again each relayRetry while the
// port stays full; false if the port failed (or port is nil).
func writePort(port *os.File, b []byte) bool {
	if port == nil {
		return false
	}
	for len(b) > 0 {
		port.SetWriteDeadline(time.Now().Add(relayRetry))
		n, err := port.Write(b)
		b = b[n:]
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
	}
	return true
}

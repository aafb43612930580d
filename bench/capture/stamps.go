//go:build linux

package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel stamps packets as they pass only while some socket asks for
// timestamps, and it turns that on lazily: SO_TIMESTAMPNS schedules a work
// item that flips a static key (netstamp_needed_key). Until it runs, a
// packet has no stamp, and recvmsg stamps it when it is read, which for a
// reader behind the traffic is after the window it belongs to. Under
// emulation the work item can take many milliseconds. So Start waits until
// a loopback datagram comes back stamped at its sending, and then keeps
// that socket open for the life of the process, so later captures find
// stamping on at once.
var stamps struct {
	sync.Mutex
	fd int // the socket that keeps stamping on (0: not yet)
}

// stampWait bounds how long Start waits for stamping to come on.
const stampWait = 5 * time.Second

// stampsOn returns once the kernel stamps packets as they pass.
func stampsOn() error {
	stamps.Lock()
	defer stamps.Unlock()
	if stamps.fd > 0 {
		return nil
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("capture: a UDP socket to check packet timestamps: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("capture: bind 127.0.0.1 to check packet timestamps: %w (is the loopback device up?)", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("capture: SO_TIMESTAMPNS: %w", err)
	}
	self, err := unix.Getsockname(fd)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(16))
	const gap = 5 * time.Millisecond
	for deadline := time.Now().Add(stampWait); ; {
		if err := unix.Sendto(fd, []byte("kqbench"), 0, self); err != nil {
			return fmt.Errorf("capture: send to check packet timestamps: %w", err)
		}
		time.Sleep(gap)
		read := time.Now().UnixNano()
		_, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
		if err != nil && !errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("capture: read back the timestamp check: %w", err)
		}
		// Stamped on its way (at least half the gap before it was read),
		// not by recvmsg.
		if ts, got := stamp(oob[:oobn]); err == nil && got && ts < read-int64(gap/2) {
			ok = true
			stamps.fd = fd
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("capture: the kernel did not start stamping packets within %v of SO_TIMESTAMPNS, so packets cannot be placed in the measurement window", stampWait)
		}
	}
}

// stamp is the SCM_TIMESTAMPNS of a packet's control messages, in Unix ns.
// It walks the headers itself: the capture calls it for every packet, and
// unix.ParseSocketControlMessage allocates.
func stamp(oob []byte) (int64, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(oob) {
			return 0, false
		}
		data := oob[unix.CmsgLen(0):n]
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(data[8:]))
			return sec*1e9 + nsec, true
		}
		oob = oob[min(unix.CmsgSpace(n-unix.CmsgLen(0)), len(oob)):]
	}
	return 0, false
}

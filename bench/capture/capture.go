//go:build linux

package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/sys/unix"

	"kquic.dev/internal/kclock"
)

// Options says what and where to capture.
type Options struct {
	// Ifname is the device, e.g. "kqb0".
	Ifname string
	// Do runs fn on a thread in the device's network namespace (e.g.
	// (*netns.NS).Do); nil: the calling thread's namespace.
	Do func(fn func() error) error
	// Dir, when not "", receives <Cell>.pcapng and <Cell>.keys.
	Dir string
	// Cell names the files; characters other than letters, digits, '-',
	// '_', '.' and '=' become '_'.
	Cell string
	// KeyLog is the key log to embed in the pcapng (may be nil).
	KeyLog *KeyLog
}

// Capture is a running capture, from Start to Stop.
type Capture struct {
	opts  Options
	fd    int
	stop  chan struct{}
	done  chan struct{}
	stats Stats
	pre   Stats // packets read before Begin
	// begin and end are the window (Unix ns, 0: not set); lateBegin is by
	// how much Begin came after its instant; stopAt is when Stop was
	// called (Unix ns).
	begin, end, lateBegin, stopAt atomic.Int64
	readErr                       error
	tmp                           *os.File
	w                             *pcapgo.NgWriter
	mu                            sync.Mutex
	stopped                       bool
}

const vnetHdrLen = 10 // struct virtio_net_hdr

// Start opens an AF_PACKET socket on the device (in its namespace) and
// captures both directions until Stop. It needs root (CAP_NET_RAW).
func Start(opts Options) (*Capture, error) {
	c := &Capture{opts: opts, fd: -1, stop: make(chan struct{}), done: make(chan struct{})}
	// In the process's own namespace (its loopback is up).
	if err := stampsOn(); err != nil {
		return nil, err
	}
	err := do(opts.Do, func() error {
		ifi, err := net.InterfaceByName(opts.Ifname)
		if err != nil {
			return fmt.Errorf("capture: device %s: %w (is the topology up, and is this its namespace?)", opts.Ifname, err)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return fmt.Errorf("capture: AF_PACKET socket: %w (needs root / CAP_NET_RAW)", err)
		}
		c.fd = fd
		// Direction comes with each packet (sll_pkttype); the vnet header
		// carries the GSO segment size of super-packets.
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
			return fmt.Errorf("capture: PACKET_VNET_HDR: %w", err)
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
		// The kernel's time of each packet places it in or out of the
		// window (Begin, End), however far behind the reader is.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("capture: SO_TIMESTAMPNS: %w", err)
		}
		tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return fmt.Errorf("capture: SO_RCVTIMEO: %w", err)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
			return fmt.Errorf("capture: bind to %s: %w", opts.Ifname, err)
		}
		// Reset the drop counter (reading it clears it).
		_, _ = unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		return nil
	})
	if err != nil {
		c.closeFD()
		return nil, err
	}
	if opts.Dir != "" {
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			c.closeFD()
			return nil, fmt.Errorf("capture: %w", err)
		}
		c.tmp, err = os.CreateTemp(opts.Dir, ".capture-*.tmp")
		if err != nil {
			c.closeFD()
			return nil, fmt.Errorf("capture: %w", err)
		}
		c.w, err = newWriter(c.tmp, opts.Ifname)
		if err != nil {
			c.closeFD()
			c.tmp.Close()
			os.Remove(c.tmp.Name())
			return nil, fmt.Errorf("capture: %w", err)
		}
	}
	go c.loop()
	return c, nil
}

func do(f func(func() error) error, fn func() error) error {
	if f == nil {
		return fn()
	}
	return f(fn)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func newWriter(w io.Writer, ifname string) (*pcapgo.NgWriter, error) {
	return pcapgo.NewNgWriterInterface(w, pcapgo.NgInterface{
		Name: ifname, LinkType: layers.LinkTypeEthernet, SnapLength: 0,
		TimestampResolution: 9, OS: "Linux",
	}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kqbench"}})
}

func (c *Capture) closeFD() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
}

// Begin opens the window the counts cover at the time at (which may be
// ahead): packets from then on count, by the kernel's timestamp, not by
// when the capture reads them. Without Begin, every packet from Start to
// Stop counts. The file holds every packet either way.
func (c *Capture) Begin(at time.Time) {
	if late := time.Since(at); c.begin.CompareAndSwap(0, realtime(at)) && late > 0 {
		c.lateBegin.Store(int64(late)) // packets read meanwhile are lost
	}
}

// realtime is the time at on the packets' clock, CLOCK_REALTIME, in Unix
// ns, taken from at's monotonic reading as the counters' window is
// (kclock), so that the two windows are the same.
func realtime(at time.Time) int64 {
	ns, _ := kclock.Realtime(at)
	return ns
}

// End closes the window at the time at: later packets do not count. Stop
// still reads what was queued before it. Without End, the window ends at
// Stop.
func (c *Capture) End(at time.Time) { c.end.CompareAndSwap(0, realtime(at)) }

// drainLimit bounds how long Stop keeps reading the packets queued before
// it was called: a reader that fell far behind the traffic gives up then
// and flags the counts Unread. Draining ends at the first packet stamped
// after Stop was called, so traffic that goes on does not make it longer,
// and the file holds every packet sent before Stop however far the reader
// was behind (those after End count as outside the window).
const drainLimit = 5 * time.Second

// loop reads packets until stop, then drains what is queued.
func (c *Capture) loop() {
	defer close(c.done)
	buf := make([]byte, 256<<10)
	oob := make([]byte, unix.CmsgSpace(16))
	dec := newDecoder()
	stopping := false
	var stopAt time.Time
	for {
		// Draining what was queued before Stop must end even while the
		// traffic goes on (the sample stops its streams after the probes).
		if stopping && time.Since(stopAt) > drainLimit {
			c.stats.Unread = true
			return
		}
		flags := unix.MSG_TRUNC
		if stopping {
			flags |= unix.MSG_DONTWAIT
		}
		n, oobn, _, from, err := unix.Recvmsg(c.fd, buf, oob, flags)
		if err != nil {
			switch {
			case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
				if stopping {
					return
				}
				select {
				case <-c.stop:
					stopping, stopAt = true, time.Now()
				default:
				}
				continue
			case errors.Is(err, unix.EINVAL):
				// The kernel could not describe a packet's GSO type in a
				// vnet header and dropped it; count it.
				c.stats.KernelDrops++
				continue
			}
			c.readErr = fmt.Errorf("capture: read: %w", err)
			return
		}
		if !stopping {
			select {
			case <-c.stop:
				stopping, stopAt = true, time.Now()
			default:
			}
		}
		if n < vnetHdrLen {
			continue
		}
		ts := packetTime(oob[:oobn])
		st := &c.stats
		switch b, e := c.begin.Load(), c.end.Load(); {
		case e != 0 && ts > e:
			if stopping && ts > c.stopAt.Load() {
				// Everything queued after this came later still.
				return
			}
			st = nil
			c.stats.Outside++
		case b == 0:
			st = &c.pre
		case ts < b:
			st = nil
			c.stats.Outside++
		}
		got := min(n, len(buf))
		gsoType := buf[1] &^ 0x80
		gsoSize := int(binary.NativeEndian.Uint16(buf[4:6]))
		if gsoType == 0 {
			gsoSize = 0
		}
		frame := buf[vnetHdrLen:got]
		length := n - vnetHdrLen
		tx := false
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			tx = true
		}
		if st != nil {
			dir := &st.Rx
			if tx {
				dir = &st.Tx
			}
			dec.count(dir, frame, length, gsoSize)
		} else {
			dec.decode(frame)
		}
		if c.w != nil && c.readErr == nil {
			if err := c.write(dec, frame, length, gsoSize, gsoType, ts); err != nil {
				c.readErr = fmt.Errorf("capture: write %s: %w", c.tmp.Name(), err)
			}
		}
	}
}

// packetTime is the SCM_TIMESTAMPNS of a packet's control messages, in
// Unix ns (now if there is none).
func packetTime(oob []byte) int64 {
	if ts, ok := stamp(oob); ok {
		return ts
	}
	return time.Now().UnixNano()
}

// write stores a frame, cutting a UDP GSO super-packet into its datagrams.
func (c *Capture) write(dec *decoder, frame []byte, length, gsoSize int, gsoType byte, ts int64) error {
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, ts), CaptureLength: len(frame), Length: length}
	const udpL4, udpUFO = 5, 3
	if gsoSize == 0 || (gsoType != udpL4 && gsoType != udpUFO) || len(frame) < length {
		return c.w.WritePacket(ci, frame)
	}
	segs, ok := splitUDP(dec, frame, gsoSize)
	if !ok {
		return c.w.WritePacket(ci, frame)
	}
	for _, s := range segs {
		ci.CaptureLength, ci.Length = len(s), len(s)
		if err := c.w.WritePacket(ci, s); err != nil {
			return err
		}
	}
	return nil
}

// splitUDP cuts an Ethernet/IP/UDP super-packet (as decoded last by dec)
// into datagrams of gsoSize payload bytes, fixing the IP and UDP lengths
// (and the IPv4 header checksum; the UDP checksum is left as it was, or 0
// over IPv4, which means none).
func splitUDP(dec *decoder, frame []byte, gsoSize int) ([][]byte, bool) {
	var ipLen int
	var v4 bool
	for _, t := range dec.decoded {
		switch t {
		case layers.LayerTypeIPv4:
			ipLen, v4 = int(dec.ip4.IHL)*4, true
		case layers.LayerTypeIPv6:
			if dec.ip6.NextHeader != layers.IPProtocolUDP {
				return nil, false
			}
			ipLen = 40
		}
	}
	hdr := 14 + ipLen + 8
	if ipLen == 0 || len(frame) <= hdr {
		return nil, false
	}
	pl := frame[hdr:]
	var out [][]byte
	for i, off := 0, 0; off < len(pl); i, off = i+1, off+gsoSize {
		chunk := pl[off:min(off+gsoSize, len(pl))]
		s := make([]byte, hdr+len(chunk))
		copy(s, frame[:hdr])
		copy(s[hdr:], chunk)
		ip := s[14:]
		udp := s[14+ipLen:]
		binary.BigEndian.PutUint16(udp[4:], uint16(8+len(chunk)))
		if v4 {
			binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+8+len(chunk)))
			binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(ip[4:])+uint16(i))
			binary.BigEndian.PutUint16(udp[6:], 0)
			binary.BigEndian.PutUint16(ip[10:], 0)
			binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:ipLen]))
		} else {
			binary.BigEndian.PutUint16(ip[4:], uint16(8+len(chunk)))
		}
		out = append(out, s)
	}
	return out, true
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// Stop ends the capture, closes the socket and, with Options.Dir, writes
// <Cell>.pcapng (with the key log as a Decryption Secrets Block) and
// <Cell>.keys. The counts are returned even when writing failed.
func (c *Capture) Stop() (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return Stats{}, errors.New("capture: Stop called twice")
	}
	c.stopped = true
	now := time.Now()
	c.stopAt.Store(now.UnixNano())
	c.End(now) // no End: the window ends now
	close(c.stop)
	<-c.done
	if st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
		c.stats.KernelDrops += uint64(st.Drops)
	}
	c.stats.LateBegin = time.Duration(c.lateBegin.Load())
	if c.begin.Load() == 0 {
		// No window: everything counts.
		c.stats.Tx, c.stats.Rx = c.pre.Tx, c.pre.Rx
	} else {
		c.stats.Outside += c.pre.Tx.Packets + c.pre.Rx.Packets
	}
	c.closeFD()
	errs := []error{c.readErr}
	if c.w != nil {
		errs = append(errs, c.finish())
	}
	return c.stats, errors.Join(errs...)
}

// CellFileName is the base name Start uses for a cell's files.
func CellFileName(cell string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == '=':
			return r
		}
		return '_'
	}, cell)
}

// finish writes the final pcapng: section and interface headers, the key
// log, then the packet blocks of the temporary file (Wireshark reads the
// secrets in one pass only if they come before the packets).
func (c *Capture) finish() (err error) {
	tmpName := c.tmp.Name()
	defer os.Remove(tmpName)
	defer c.tmp.Close()
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("capture: write %s: %w", tmpName, err)
	}
	base := filepath.Join(c.opts.Dir, CellFileName(c.opts.Cell))
	var keys []byte
	if c.opts.KeyLog != nil {
		keys = c.opts.KeyLog.Bytes()
	}
	if err := os.WriteFile(base+".keys", keys, 0o600); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	c.stats.KeyFile = base + ".keys"
	f, err := os.Create(base + ".pcapng")
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("capture: %w", cerr)
		}
	}()
	w, err := newWriter(f, c.opts.Ifname)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if len(keys) > 0 {
		if err := w.WriteDecryptionSecretsBlock(pcapgo.DSB_SECRETS_TYPE_TLS, keys); err != nil {
			return fmt.Errorf("capture: key log block: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if _, err := c.tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if err := copyPacketBlocks(f, bufio.NewReader(c.tmp)); err != nil {
		return fmt.Errorf("capture: copy packets to %s: %w", f.Name(), err)
	}
	c.stats.File = f.Name()
	return nil
}

// copyPacketBlocks copies the blocks of a little-endian pcapng stream
// except its section header and interface description blocks.
func copyPacketBlocks(dst io.Writer, src io.Reader) error {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(src, hdr[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		typ := binary.LittleEndian.Uint32(hdr[:4])
		n := int64(binary.LittleEndian.Uint32(hdr[4:]))
		if n < 12 {
			return fmt.Errorf("bad pcapng block length %d", n)
		}
		if typ == 0x0A0D0D0A || typ == 1 {
			if _, err := io.CopyN(io.Discard, src, n-8); err != nil {
				return err
			}
			continue
		}
		if _, err := dst.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := io.CopyN(dst, src, n-8); err != nil {
			return err
		}
	}
}

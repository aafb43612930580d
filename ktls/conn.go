//go:build linux

package ktls

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a TLS connection whose records the kernel encrypts and decrypts.
// Read and Write are plain read and write system calls on the TCP socket;
// ReadFrom sends files with sendfile. In userspace fallback (see
// Config.Fallback) every method goes through crypto/tls instead.
//
// Read and Write may be called concurrently with each other, as for
// net.Conn; concurrent Reads (or Writes) are serialised.
type Conn struct {
	tcp      *net.TCPConn
	raw      syscall.RawConn
	tls      *tls.Conn // the handshake's conn; used for I/O only in fallback
	rc       *recordConn
	state    tls.ConnectionState
	isClient bool

	kernel        bool  // records are in the kernel
	kernelTouched bool  // a key went into the kernel (no fallback possible)
	fallback      error // why the kernel was not used
	notes         []string

	suite   *suite
	version uint16

	readMu   sync.Mutex
	rxSecret []byte
	ctrl     ctrlParser
	readErr  error  // sticky
	small    []byte // leftover application data read through smallBuf
	smallBuf [256]byte

	writeMu          sync.Mutex
	txSecret         []byte
	writeErr         error // sticky
	closeNotifySent  bool
	keyUpdatePending atomic.Bool

	closeOnce sync.Once
	closeErr  error

	stats struct {
		tickets, kuRecv, kuSent, alerts, ctrlRecords atomic.Uint64
	}
}

func newConn(tcp *net.TCPConn, hc *handshakeResult, config *Config) *Conn {
	raw, _ := tcp.SyscallConn() // a *net.TCPConn always has one
	return &Conn{tcp: tcp, raw: raw, tls: hc.tls, rc: hc.rc, state: hc.state, isClient: hc.isClient}
}

// useFallback leaves the connection with crypto/tls.
func (c *Conn) useFallback(why error) {
	c.kernel = false
	c.fallback = why
	c.rc.setPassthrough()
}

// attach moves the keys into the kernel.
func (c *Conn) attach(k *sessionKeys, config *Config) error {
	defer k.wipe()
	c.suite, c.version = k.suite, k.version
	tx, err := k.tx.marshal()
	if err != nil {
		return err
	}
	rx, err := k.rx.marshal()
	if err != nil {
		return err
	}
	kerr := func(op string, err error) *KernelError {
		e := &KernelError{Op: op, Suite: k.suite.id, Version: k.version, Err: err}
		switch {
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOPKG):
			e.Kind = ErrUnsupportedCipher
			e.Hint = "this kernel lacks the cipher or TLS version (CONFIG_CRYPTO_GCM/CHACHA20POLY1305, TLS 1.3 needs Linux 5.1+); set Config.Fallback to continue in userspace"
		default:
			e.Hint = "set Config.Fallback to continue in userspace"
		}
		return e
	}
	var serr error
	err = c.raw.Control(func(fd uintptr) {
		if err := unix.SetsockoptString(int(fd), unix.SOL_TCP, unix.TCP_ULP, "tls"); err != nil {
			serr = &KernelError{Op: `setsockopt(SOL_TCP, TCP_ULP, "tls")`, Err: err, Kind: ErrNoKernelTLS,
				Hint: "load the tls module (`modprobe tls`, CONFIG_TLS) or set Config.Fallback to continue in userspace"}
			return
		}
		// The ULP alone changes nothing on the wire: until a key is set the
		// socket passes bytes through, so crypto/tls can still take over.
		if err := unix.SetsockoptString(int(fd), solTLS, optTLSTX, string(tx)); err != nil {
			serr = kerr("setsockopt(SOL_TLS, TLS_TX)", err)
			return
		}
		c.kernelTouched = true
		if err := unix.SetsockoptString(int(fd), solTLS, optTLSRX, string(rx)); err != nil {
			serr = kerr("setsockopt(SOL_TLS, TLS_RX)", err)
			serr.(*KernelError).Hint = "the send side is already in the kernel, so the connection is lost; " + serr.(*KernelError).Hint
			return
		}
		if config.ZeroCopySendfile {
			if err := unix.SetsockoptInt(int(fd), solTLS, optTLSTXZeroCopyRO, 1); err != nil {
				c.notes = append(c.notes, fmt.Sprintf("TLS_TX_ZEROCOPY_RO not set: %v", err))
			}
		}
		if config.ExpectNoPad && k.suite.tls13 {
			if err := unix.SetsockoptInt(int(fd), solTLS, optTLSRXExpectNoPad, 1); err != nil {
				c.notes = append(c.notes, fmt.Sprintf("TLS_RX_EXPECT_NO_PAD not set: %v", err))
			}
		}
	})
	if err != nil {
		return fmt.Errorf("ktls: socket control: %w", err)
	}
	if serr != nil {
		return serr
	}
	c.kernel = true
	c.txSecret, c.rxSecret = k.txSecret, k.rxSecret
	return nil
}

// KernelTLS reports whether the kernel does the record layer (false in
// userspace fallback).
func (c *Conn) KernelTLS() bool { return c.kernel }

// SyscallConn gives access to the TCP socket, for a sender that writes
// application data to it by another call than write (sendfile(2)): the
// kernel frames and encrypts whatever reaches the socket. It fails with
// ErrNoKernelTLS on a connection in userspace fallback, whose socket
// carries records crypto/tls made. Such writes bypass Write's lock: the
// caller must be the connection's only writer.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	if !c.kernel {
		return nil, fmt.Errorf("ktls: the connection is in userspace fallback (%v): %w", c.fallback, ErrNoKernelTLS)
	}
	return c.raw, nil
}

// FallbackReason is why the connection stayed in userspace, or nil.
func (c *Conn) FallbackReason() error { return c.fallback }

// Notes lists optional kernel features that were asked for but not set.
func (c *Conn) Notes() []string { return c.notes }

// ConnectionState returns the handshake's outcome.
func (c *Conn) ConnectionState() tls.ConnectionState { return c.state }

// Stats returns the connection's control record counters.
func (c *Conn) Stats() ConnStats {
	return ConnStats{
		NewSessionTickets:  c.stats.tickets.Load(),
		KeyUpdatesReceived: c.stats.kuRecv.Load(),
		KeyUpdatesSent:     c.stats.kuSent.Load(),
		ControlRecords:     c.stats.ctrlRecords.Load(),
	}
}

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.tcp.LocalAddr() }

// RemoteAddr returns the remote network address.
func (c *Conn) RemoteAddr() net.Addr { return c.tcp.RemoteAddr() }

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error { return c.tcp.SetDeadline(t) }

// SetReadDeadline sets the read deadline.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.tcp.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.tcp.SetWriteDeadline(t) }

// Read reads application data. It returns io.EOF after the peer's
// close_notify, an *AlertError after another alert, and an error wrapping
// io.ErrUnexpectedEOF if the TCP stream ends without close_notify.
// NewSessionTicket and KeyUpdate messages are handled inside Read.
func (c *Conn) Read(p []byte) (int, error) {
	if !c.kernel {
		return c.tls.Read(p)
	}
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if len(c.small) > 0 {
		n := copy(p, c.small)
		c.small = c.small[n:]
		return n, nil
	}
	if c.readErr != nil {
		return 0, c.readErr
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		// A tiny buffer could split a control record across many reads;
		// read into our own buffer instead.
		buf := p
		if len(p) < len(c.smallBuf) {
			buf = c.smallBuf[:]
		}
		n, typ, err := c.recv(buf)
		if err != nil {
			return 0, c.readFailed(err)
		}
		if n == 0 && typ == 0 {
			err := fmt.Errorf("ktls: the peer closed the TCP connection without a TLS close_notify: %w", io.ErrUnexpectedEOF)
			if c.ctrl.pending() {
				err = fmt.Errorf("ktls: the TCP stream ended inside a TLS message: %w", io.ErrUnexpectedEOF)
			}
			c.readErr = err
			return 0, err
		}
		if typ == recordApplicationData {
			if len(buf) != len(p) {
				m := copy(p, buf[:n])
				c.small = buf[m:n]
				return m, nil
			}
			return n, nil
		}
		c.stats.ctrlRecords.Add(1)
		if err := c.control(typ, buf[:n]); err != nil {
			c.readErr = err
			return 0, err
		}
	}
}

// recv is one recvmsg: n bytes of a record of type typ (0 at end of stream).
func (c *Conn) recv(p []byte) (n int, typ byte, err error) {
	var oob [64]byte
	var oobn, flags int
	var serr error
	err = c.raw.Read(func(fd uintptr) bool {
		n, oobn, flags, _, serr = unix.Recvmsg(int(fd), p, oob[:], 0)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, 0, err
	}
	if flags&unix.MSG_CTRUNC != 0 {
		return 0, 0, errors.New("ktls: recvmsg truncated the record type cmsg (internal error)")
	}
	typ, err = recordTypeFromCmsg(oob[:oobn])
	return n, typ, err
}

// recordTypeFromCmsg finds TLS_GET_RECORD_TYPE in recvmsg's control data; 0
// if absent.
func recordTypeFromCmsg(oob []byte) (byte, error) {
	if len(oob) == 0 {
		return 0, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, fmt.Errorf("ktls: parsing recvmsg control data: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Level == solTLS && m.Header.Type == cmsgTLSGetRecordType && len(m.Data) >= 1 {
			return m.Data[0], nil
		}
	}
	return 0, nil
}

// readFailed turns a recvmsg error into Read's error, sticky unless it is a
// timeout.
func (c *Conn) readFailed(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	switch {
	case errors.Is(err, unix.EBADMSG):
		err = fmt.Errorf("ktls: the kernel could not decrypt a record (bad_record_mac): keys or sequence numbers differ from the peer's, or the stream was corrupted: %w", err)
	case errors.Is(err, unix.EMSGSIZE):
		err = fmt.Errorf("ktls: the peer sent a record longer than TLS allows (record_overflow): %w", err)
	case errors.Is(err, unix.EKEYEXPIRED):
		err = fmt.Errorf("ktls: the kernel holds records after a KeyUpdate whose new key was not installed: %w", err)
	default:
		err = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	c.readErr = err
	return err
}

// control handles a non-application-data record.
func (c *Conn) control(typ byte, data []byte) error {
	evs, err := c.ctrl.feed(typ, data)
	if err != nil {
		c.sendAlert(2, 10) // unexpected_message
		return err
	}
	for _, ev := range evs {
		if ev.alert {
			c.stats.alerts.Add(1)
			if err := alertErr(ev.level, ev.desc); err != nil {
				return err
			}
			continue
		}
		switch {
		case ev.hsType == hsNewSessionTicket && c.suite.tls13:
			c.stats.tickets.Add(1)
		case ev.hsType == hsKeyUpdate && c.suite.tls13:
			if err := c.peerKeyUpdate(ev.hsBody); err != nil {
				return err
			}
		case ev.hsType == hsHelloRequest && !c.suite.tls13:
			// A TLS 1.2 server asking for renegotiation; RFC 5246 lets the
			// client ignore it.
		case ev.hsType == hsCertificateRequest:
			c.sendAlert(2, 10)
			return fmt.Errorf("%w: post-handshake client authentication (CertificateRequest) is not supported", ErrUnexpectedMessage)
		default:
			c.sendAlert(2, 10)
			return fmt.Errorf("%w: handshake message type %d", ErrUnexpectedMessage, ev.hsType)
		}
	}
	return nil
}

// Write writes application data; the kernel cuts it into records.
func (c *Conn) Write(p []byte) (int, error) {
	if !c.kernel {
		return c.tls.Write(p)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.writableLocked(); err != nil {
		return 0, err
	}
	return c.tcp.Write(p)
}

// writableLocked checks the sticky write error and sends a KeyUpdate the
// peer asked for, which must precede further application data.
func (c *Conn) writableLocked() error {
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.closeNotifySent {
		return errors.New("ktls: write after CloseWrite or Close")
	}
	if c.keyUpdatePending.CompareAndSwap(true, false) {
		if err := c.sendKeyUpdateLocked(false); err != nil {
			return err
		}
	}
	return nil
}

// sendRecordLocked sends one record of content type typ through sendmsg
// with a TLS_SET_RECORD_TYPE cmsg.
func (c *Conn) sendRecordLocked(typ byte, data []byte) error {
	oob := recordTypeCmsg(typ)
	var serr error
	err := c.raw.Write(func(fd uintptr) bool {
		_, serr = unix.SendmsgN(int(fd), data, oob, nil, 0)
		return serr != unix.EAGAIN
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("ktls: sending a TLS record of type %d: %w", typ, err)
	}
	return nil
}

// recordTypeCmsg encodes a struct cmsghdr {len, SOL_TLS,
// TLS_SET_RECORD_TYPE} followed by the type byte.
func recordTypeCmsg(typ byte) []byte { return tlsCmsg(cmsgTLSSetRecordType, typ) }

// tlsCmsg encodes a one-byte SOL_TLS control message.
func tlsCmsg(cmsgType int, typ byte) []byte {
	b := make([]byte, unix.CmsgSpace(1))
	lenSize := unix.SizeofCmsghdr - 8 // cmsg_len is a size_t
	if lenSize == 8 {
		binary.NativeEndian.PutUint64(b, uint64(unix.CmsgLen(1)))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(unix.CmsgLen(1)))
	}
	binary.NativeEndian.PutUint32(b[lenSize:], uint32(solTLS))
	binary.NativeEndian.PutUint32(b[lenSize+4:], uint32(cmsgType))
	b[unix.CmsgLen(0)] = typ
	return b
}

// sendAlert sends an alert if no write is in progress (best effort).
func (c *Conn) sendAlert(level, desc byte) {
	if !c.writeMu.TryLock() {
		return
	}
	defer c.writeMu.Unlock()
	if c.closeNotifySent || c.writeErr != nil {
		return
	}
	c.tcp.SetWriteDeadline(time.Now().Add(time.Second))
	c.sendRecordLocked(recordAlert, []byte{level, desc})
	c.tcp.SetWriteDeadline(time.Time{})
	if desc == 0 || level == 2 {
		c.closeNotifySent = true
	}
}

// CloseWrite sends close_notify and shuts down the sending side of the TCP
// connection; the peer reads io.EOF, and Read keeps working.
func (c *Conn) CloseWrite() error {
	if !c.kernel {
		return c.tls.CloseWrite()
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if !c.closeNotifySent {
		c.closeNotifySent = true
		if err := c.sendRecordLocked(recordAlert, []byte{1, 0}); err != nil {
			return err
		}
	}
	return c.tcp.CloseWrite()
}

// Close sends close_notify (unless a write is blocked, or within 5 seconds)
// and closes the connection.
func (c *Conn) Close() error {
	if !c.kernel {
		return c.tls.Close()
	}
	c.closeOnce.Do(func() {
		if c.writeMu.TryLock() {
			if !c.closeNotifySent && c.writeErr == nil {
				c.closeNotifySent = true
				c.tcp.SetWriteDeadline(time.Now().Add(5 * time.Second))
				c.sendRecordLocked(recordAlert, []byte{1, 0})
			}
			c.writeMu.Unlock()
		}
		c.closeErr = c.tcp.Close()
	})
	return c.closeErr
}

//go:build linux

package ktls

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"golang.org/x/sys/unix"
)

// peerKeyUpdate handles a TLS 1.3 KeyUpdate from the peer: the kernel has
// paused decryption at it (Linux 6.14+), so install the next receive key,
// and answer with our own KeyUpdate if the peer asked for one.
func (c *Conn) peerKeyUpdate(body []byte) error {
	requested, err := parseKeyUpdate(body)
	if err != nil {
		c.sendAlert(2, 50) // decode_error
		return err
	}
	next := nextTrafficSecret(c.suite, c.rxSecret)
	key, iv := tls13TrafficKeys(c.suite, next)
	if err := c.setKey(optTLSRX, directionInfo(c.suite, key, iv, 0)); err != nil {
		return err
	}
	clear(c.rxSecret)
	c.rxSecret = next
	c.stats.kuRecv.Add(1)
	if requested {
		c.keyUpdatePending.Store(true)
		// Answer now unless a Write holds the lock; then that Write (or the
		// next one) answers before sending more data.
		if c.writeMu.TryLock() {
			err := c.writableLocked()
			c.writeMu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// KeyUpdate sends a TLS 1.3 KeyUpdate and moves the send side to the next
// traffic key. With requestPeer the peer is asked to update its own key too.
// It returns an error wrapping ErrKeyUpdateUnsupported, before sending
// anything, on kernels that cannot rekey.
func (c *Conn) KeyUpdate(requestPeer bool) error {
	if !c.kernel {
		return errors.New("ktls: KeyUpdate: the connection is in userspace fallback, and crypto/tls cannot initiate a KeyUpdate")
	}
	if !c.suite.tls13 {
		return errors.New("ktls: KeyUpdate: TLS 1.2 has no KeyUpdate (it exists from TLS 1.3 on)")
	}
	if err := rekeySupported(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.writableLocked(); err != nil {
		return err
	}
	c.keyUpdatePending.Store(false) // this update answers a pending request too
	return c.sendKeyUpdateLocked(requestPeer)
}

func (c *Conn) sendKeyUpdateLocked(requestPeer bool) error {
	req := byte(0)
	if requestPeer {
		req = 1
	}
	if err := c.sendRecordLocked(recordHandshake, []byte{hsKeyUpdate, 0, 0, 1, req}); err != nil {
		c.writeErr = err
		return err
	}
	next := nextTrafficSecret(c.suite, c.txSecret)
	key, iv := tls13TrafficKeys(c.suite, next)
	if err := c.setKey(optTLSTX, directionInfo(c.suite, key, iv, 0)); err != nil {
		// The KeyUpdate is out; the peer now expects the new key.
		c.writeErr = err
		return err
	}
	clear(c.txSecret)
	c.txSecret = next
	c.stats.kuSent.Add(1)
	return nil
}

// setKey installs a replacement key for one direction.
func (c *Conn) setKey(opt int, ci *cryptoInfo) error {
	defer ci.wipe()
	b, err := ci.marshal()
	if err != nil {
		return err
	}
	name := map[int]string{optTLSTX: "TLS_TX", optTLSRX: "TLS_RX"}[opt]
	var serr error
	if err := c.raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), solTLS, opt, string(b))
	}); err != nil {
		return fmt.Errorf("ktls: socket control: %w", err)
	}
	clear(b)
	if serr != nil {
		return rekeyError("setsockopt(SOL_TLS, "+name+") for a KeyUpdate", c.suite.id, serr)
	}
	return nil
}

func rekeyError(op string, suite uint16, err error) *KernelError {
	e := &KernelError{Op: op, Suite: suite, Version: 0x0304, Err: err}
	if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.EINVAL) {
		e.Kind = ErrKeyUpdateUnsupported
		e.Hint = "the connection cannot continue; run on Linux 6.14 or later for TLS 1.3 KeyUpdate"
	}
	return e
}

var rekeyProbe struct {
	once sync.Once
	err  error
}

// rekeySupported finds out once whether this kernel replaces TLS_TX keys,
// on a throwaway loopback connection.
func rekeySupported() error {
	rekeyProbe.once.Do(func() { rekeyProbe.err = probeRekey() })
	return rekeyProbe.err
}

func probeRekey() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("ktls: probing kernel rekey support: %w", err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return fmt.Errorf("ktls: probing kernel rekey support: %w", err)
	}
	defer c.Close()
	if s, err := ln.Accept(); err == nil {
		defer s.Close()
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return err
	}
	ci := &cryptoInfo{version: kernelTLS13Version, cipher: kcAESGCM128,
		iv: make([]byte, 8), key: make([]byte, 16), salt: make([]byte, 4)}
	b, _ := ci.marshal()
	var perr error
	raw.Control(func(fd uintptr) {
		if err := unix.SetsockoptString(int(fd), unix.SOL_TCP, unix.TCP_ULP, "tls"); err != nil {
			perr = &KernelError{Op: `setsockopt(SOL_TCP, TCP_ULP, "tls")`, Err: err, Kind: ErrNoKernelTLS}
			return
		}
		if err := unix.SetsockoptString(int(fd), solTLS, optTLSTX, string(b)); err != nil {
			perr = &KernelError{Op: "setsockopt(SOL_TLS, TLS_TX)", Err: err}
			return
		}
		if err := unix.SetsockoptString(int(fd), solTLS, optTLSTX, string(b)); err != nil {
			perr = rekeyError("setsockopt(SOL_TLS, TLS_TX) a second time", 0, err)
		}
	})
	return perr
}

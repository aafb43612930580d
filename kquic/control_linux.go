package kquic

import (
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"

	"kquic.dev/internal/quicabi"
)

// UpdateKeys starts a key update (RFC 9001 §6): the kernel derives the next
// keys and flips the key phase. It fails while a previous update is still in
// progress.
func (c *Conn) UpdateKeys() error {
	if err := c.sock.SetOption(quicabi.QUIC_SOCKOPT_KEY_UPDATE, nil); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("kquic: key update: %w (the previous update has not completed yet)", err)
		}
		return fmt.Errorf("kquic: key update: %w", err)
	}
	return nil
}

// Migrate moves the connection to a new local address (same family,
// specific address, new port). The kernel validates the new path and
// switches once the peer answers; a MigrationEvent (if enabled) tells when.
func (c *Conn) Migrate(local netip.AddrPort) error {
	if err := c.sock.SetMigrationAddr(local); err != nil {
		if errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("kquic: migrate to %v: %w (a migration is already in progress)", local, err)
		}
		return fmt.Errorf("kquic: migrate to %v: %w", local, err)
	}
	return nil
}

// ConnectionIDs reports the connection ID numbers of one side: ours (dest
// false) or the peer's (dest true). active is the number in use, priorTo the
// lowest number still live.
func (c *Conn) ConnectionIDs(dest bool) (active, priorTo uint32, err error) {
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_CONNECTION_ID, quicabi.ConnectionIDInfo{Dest: dest}.Marshal())
	if err != nil {
		return 0, 0, fmt.Errorf("kquic: get connection IDs: %w", err)
	}
	info, err := quicabi.UnmarshalConnectionIDInfo(b)
	if err != nil {
		return 0, 0, err
	}
	return info.Active, info.PriorTo, nil
}

// RetireConnectionIDs retires every connection ID numbered below priorTo,
// and, if active is not zero, switches to that number (which must exist and
// be higher than the current one).
func (c *Conn) RetireConnectionIDs(dest bool, active, priorTo uint32) error {
	err := c.sock.SetOption(quicabi.QUIC_SOCKOPT_CONNECTION_ID, quicabi.ConnectionIDInfo{Dest: dest, Active: active, PriorTo: priorTo}.Marshal())
	if err != nil {
		return fmt.Errorf("kquic: set connection IDs (dest %v, active %d, prior to %d): %w", dest, active, priorTo, err)
	}
	return nil
}

// Token returns the address validation token the server sent (NEW_TOKEN),
// for Config.Token of a later connection. Clients only.
func (c *Conn) Token() ([]byte, error) {
	if !c.client {
		return nil, errors.New("kquic: Token is for clients")
	}
	b, err := c.sock.GetOption(quicabi.QUIC_SOCKOPT_TOKEN, make([]byte, 256))
	if err != nil {
		return nil, fmt.Errorf("kquic: get token: %w", err)
	}
	return append([]byte(nil), b...), nil
}

// SendNewToken makes a server send one more NEW_TOKEN frame.
func (c *Conn) SendNewToken() error {
	if c.client {
		return errors.New("kquic: SendNewToken is for servers")
	}
	if err := c.sock.SetOption(quicabi.QUIC_SOCKOPT_TOKEN, nil); err != nil {
		return fmt.Errorf("kquic: send NEW_TOKEN: %w", err)
	}
	return nil
}

// PeerTransportParameters returns the transport parameters the peer sent.
func (c *Conn) PeerTransportParameters() (TransportParameters, error) {
	p, err := getTransport(c.sock, true)
	return fromABI(p), err
}

// TransportParameters returns the connection's own transport parameters.
func (c *Conn) TransportParameters() (TransportParameters, error) {
	p, err := getTransport(c.sock, false)
	return fromABI(p), err
}

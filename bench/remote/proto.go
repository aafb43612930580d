//go:build linux

// Package remote is the two-host mode of kqbench: a control protocol
// between `kqbench client` (or `kqbench matrix --peer`) and `kqbench server`
// on the peer, which applies the peer's side of each benchmark cell (MTU,
// offloads), runs the server end of each sample, and reports the bytes it
// received and its CPU counters.
//
// The protocol is JSON messages, one per line, over TLS 1.3. The server
// makes a self-signed certificate at start and prints its SHA-256
// fingerprint, which the client pins (or trusts on first use, printing it).
// Independent of TLS, both ends prove they know the shared token: the server
// greets with its protocol name, version and a random nonce; the client
// answers hello with its version and HMAC-SHA256(token, "client", nonce,
// TLS exporter); the server answers with the same MAC for "server". The
// token never crosses the wire, MACs are compared in constant time, and the
// TLS exporter binds them to this one TLS connection, so a relay between two
// TLS connections cannot reuse them. Another version, a wrong token, and
// anything that is not the protocol (plain TCP, HTTP) are refused, logged,
// and the connection closed.
//
// After hello, the client sends requests and the server answers each:
// prepare (MTU and GSO on the server's device), listen (start the server of
// one sample: transport, options, message size; answers the port), snapshot
// (bytes received and CPU counters), stop. One connection drives a whole
// matrix; when it ends the server stops any sample and puts its device back
// as it found it. One client is served at a time, the others told the
// server is busy; a session silent for longer than its client's sample time
// plus IdleMargin (or the server's fixed limit) is told so and ended.
package remote

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"kquic.dev/bench/results"
	"kquic.dev/bench/side"
)

// Version is the control protocol's version; client and server must speak
// the same one.
const Version = 1

// protocol names the protocol in the server's greeting.
const protocol = "kqbench-remote"

// exporterLabel is the TLS exporter label that binds the token MACs to the
// TLS connection.
const exporterLabel = "EXPORTER-kqbench-remote"

// maxMessage bounds one message, so a peer cannot make the other buffer
// without limit.
const maxMessage = 1 << 20

// Errors a client reports, for errors.Is.
var (
	// ErrTokenRefused: the server refused the token.
	ErrTokenRefused = errors.New("the server refused the token")
	// ErrVersion: the two ends speak different protocol versions.
	ErrVersion = errors.New("the server speaks another version of the kqbench control protocol")
	// ErrFingerprint: the server's certificate is not the pinned one.
	ErrFingerprint = errors.New("the server's certificate does not match --fingerprint")
	// ErrNotServer: the peer does not speak the protocol, or did not prove
	// the token.
	ErrNotServer = errors.New("the peer is not a kqbench server")
	// ErrBusy: another client is running a benchmark on the server.
	ErrBusy = errors.New("the kqbench server is busy with another client")
	// ErrCutOff: the server ended the session, which had been silent for
	// longer than its idle limit.
	ErrCutOff = errors.New("the kqbench server cut the session off")
)

// Error codes in responses.
const (
	codeVersion = "version"
	codeToken   = "token"
	codeBusy    = "busy"
	codeProto   = "protocol"
	// codeIdle: the session was silent for longer than the idle limit;
	// sent unasked, just before the server closes the connection.
	codeIdle = "idle"
)

// greeting is the server's first message.
type greeting struct {
	Proto   string `json:"proto"`
	Version int    `json:"version"`
	Nonce   []byte `json:"nonce"`
}

// Operations.
const (
	opHello    = "hello"
	opPrepare  = "prepare"
	opListen   = "listen"
	opSnapshot = "snapshot"
	opStop     = "stop"
	// The modes add theirs (side.RegisterOp); an older server answers one
	// it does not have "unknown operation".
)

// request is a client's message.
type request struct {
	Op string `json:"op"`
	// hello
	Version int    `json:"version,omitempty"`
	MAC     []byte `json:"mac,omitempty"`
	// prepare
	MTU int  `json:"mtu,omitempty"`
	GSO bool `json:"gso,omitempty"`
	// listen (and GSO)
	Transport string `json:"transport,omitempty"`
	Crypto    bool   `json:"crypto,omitempty"`
	Size      int    `json:"size,omitempty"`
	// NoDelay is transport.Options.NoDelay (a request/response mode's);
	// an older server ignores it.
	NoDelay bool `json:"no_delay,omitempty"`
	// CC, Window and UDPRcvBuf are the cell's transport.Options of the
	// same names (congestion control, QUIC flow-control window, quic-go's
	// UDP receive buffer).
	CC        string `json:"cc,omitempty"`
	Window    int    `json:"window,omitempty"`
	UDPRcvBuf int    `json:"udp_rcvbuf,omitempty"`
	// ReadSize is transport.Options.ReadSize: the bytes the server's
	// receiver asks for in each read (0: its default; an older server
	// ignores it).
	ReadSize int `json:"read_size,omitempty"`
	// Explain asks the server to count packets, syscalls and drops on its
	// side between the sample's two snapshots.
	Explain bool `json:"explain,omitempty"`
	// SampleMS is the client's sample time (warmup and measured time) in
	// milliseconds, with every request: the server cuts off a session
	// silent for longer than this plus IdleMargin (0: IdleMargin alone;
	// an older server ignores it).
	SampleMS int64 `json:"sample_ms,omitempty"`
}

// response is the server's answer to a request.
type response struct {
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	// hello
	MAC     []byte               `json:"mac,omitempty"`
	Env     *results.Environment `json:"environment,omitempty"`
	Cert    []byte               `json:"cert,omitempty"`
	Device  string               `json:"device,omitempty"`
	Warning string               `json:"warning,omitempty"`
	// prepare
	Offloads string `json:"offloads,omitempty"`
	// listen
	Port int `json:"port,omitempty"`
	// snapshot
	Snapshot *side.ServerSnapshot `json:"snapshot,omitempty"`
	// The answers of the modes' operations add their fields
	// (withAnswer).
}

// tokenMAC is HMAC-SHA256(token, protocol, role, nonce, binding).
func tokenMAC(token, role string, nonce, binding []byte) []byte {
	m := hmac.New(sha256.New, []byte(token))
	fmt.Fprintf(m, "%s %s\x00", protocol, role)
	m.Write(nonce)
	m.Write(binding)
	return m.Sum(nil)
}

// binding is the TLS exporter value of the connection.
func binding(c *tls.Conn) ([]byte, error) {
	cs := c.ConnectionState()
	return cs.ExportKeyingMaterial(exporterLabel, nil, 32)
}

// Fingerprint is the SHA-256 of a certificate (DER), in hex.
func Fingerprint(der []byte) string {
	h := sha256.Sum256(der)
	return hex.EncodeToString(h[:])
}

// normalizeFingerprint accepts the fingerprint with or without colons, a
// "sha256:" prefix, in either case.
func normalizeFingerprint(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "sha256:")
	return strings.ReplaceAll(s, ":", "")
}

// codec reads and writes one JSON message per line.
type codec struct {
	r *bufio.Reader
	w io.Writer
}

func newCodec(rw io.ReadWriter) *codec {
	return &codec{r: bufio.NewReaderSize(rw, 64<<10), w: rw}
}

func (c *codec) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// errNotJSON marks a message that is not the protocol.
var errNotJSON = errors.New("not a JSON message")

func (c *codec) recv(v any) error {
	var line []byte
	for {
		part, err := c.r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxMessage {
			return fmt.Errorf("%w: a message longer than %d bytes", errNotJSON, maxMessage)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return nil
}

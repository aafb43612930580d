//go:build linux

package capture

import (
	"bytes"
	"sync"
)

// KeyLog collects the NSS key log lines a TLS stack writes (set it as
// tls.Config.KeyLogWriter on either end). It is safe for concurrent use.
type KeyLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// NewKeyLog returns an empty key log.
func NewKeyLog() *KeyLog { return &KeyLog{} }

// Write appends key log lines.
func (k *KeyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.Write(p)
}

// Bytes returns a copy of what was written so far.
func (k *KeyLog) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return bytes.Clone(k.buf.Bytes())
}

package interop

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"sync"
)

// KeyLog collects NSS key log lines (SSLKEYLOGFILE format) from any number
// of writers: the two ends of a case write into one.
type KeyLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	secrets map[string]map[string][]byte // client random (hex) -> label -> secret
}

// Write implements io.Writer (tls.Config.KeyLogWriter).
func (k *KeyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.buf.Write(p)
	k.secrets = nil
	return len(p), nil
}

// ReadFrom adds the lines of a key log file that another program wrote.
func (k *KeyLog) ReadFrom(r io.Reader) (int64, error) {
	b, err := io.ReadAll(r)
	k.Write(b)
	return int64(len(b)), err
}

// Bytes is the key log, for the evidence.
func (k *KeyLog) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]byte(nil), k.buf.Bytes()...)
}

// Secret is the secret with a label for a client random, nil if none.
func (k *KeyLog) Secret(clientRandom []byte, label string) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.secrets == nil {
		k.secrets = map[string]map[string][]byte{}
		sc := bufio.NewScanner(bytes.NewReader(k.buf.Bytes()))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 3 || strings.HasPrefix(f[0], "#") {
				continue
			}
			s, err := hex.DecodeString(f[2])
			if err != nil {
				continue
			}
			cr := strings.ToLower(f[1])
			if k.secrets[cr] == nil {
				k.secrets[cr] = map[string][]byte{}
			}
			k.secrets[cr][f[0]] = s
		}
	}
	return k.secrets[hex.EncodeToString(clientRandom)][label]
}

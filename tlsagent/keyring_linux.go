//go:build linux

package tlsagent

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// KeyError is a key serial the consumer (or the configuration) named that
// could not be used; Err is the keyctl errno (ENOKEY for a serial that does
// not exist, EKEYEXPIRED, EKEYREVOKED, EACCES) or a decoding error.
type KeyError struct {
	Serial int32
	What   string // "certificate", "private key", "PSK", "keyring"
	Err    error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("%s key %d: %v", e.What, e.Serial, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }

// readKey returns the payload of a key (KEYCTL_READ).
func readKey(serial int32, what string) ([]byte, error) {
	buf := make([]byte, 4096)
	for {
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, int(serial), buf, 0)
		if err != nil {
			return nil, &KeyError{serial, what, err}
		}
		if n <= len(buf) {
			return buf[:n], nil
		}
		if n > 1<<20 {
			return nil, &KeyError{serial, what, fmt.Errorf("payload of %d bytes is too large", n)}
		}
		buf = make([]byte, n)
	}
}

// describeKey returns a key's type and description (KEYCTL_DESCRIBE).
func describeKey(serial int32, what string) (typ, desc string, err error) {
	s, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, int(serial))
	if err != nil {
		return "", "", &KeyError{serial, what, err}
	}
	// "type;uid;gid;perm;description"
	f := strings.SplitN(s, ";", 5)
	if len(f) != 5 {
		return "", "", &KeyError{serial, what, fmt.Errorf("unexpected description %q", s)}
	}
	return f[0], f[4], nil
}

// psk is a TLS pre-shared key from the keyring: the key's description is the
// PSK identity, its payload the key.
type psk struct {
	serial   int32
	identity string
	key      []byte
}

func loadPSK(serial int32) (*psk, error) {
	if serial == tlsNoPeerID {
		return nil, &KeyError{serial, "PSK", errors.New("the request names no key (serial 0)")}
	}
	_, desc, err := describeKey(serial, "PSK")
	if err != nil {
		return nil, err
	}
	key, err := readKey(serial, "PSK")
	if err != nil {
		return nil, err
	}
	return &psk{serial: serial, identity: desc, key: key}, nil
}

// loadKeyPair reads a certificate (PEM or DER, a chain allowed in PEM) and
// its private key (PEM or DER PKCS#8/PKCS#1/SEC1) from two keys.
func loadKeyPair(certSerial, keySerial int32) (*tls.Certificate, error) {
	cb, err := readKey(certSerial, "certificate")
	if err != nil {
		return nil, err
	}
	kb, err := readKey(keySerial, "private key")
	if err != nil {
		return nil, err
	}
	var cert tls.Certificate
	if bytes := cb; len(bytes) > 0 && !strings.HasPrefix(strings.TrimSpace(string(bytes)), "-----BEGIN") {
		cert.Certificate = [][]byte{cb}
	} else {
		for rest := cb; ; {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			if blk.Type == "CERTIFICATE" {
				cert.Certificate = append(cert.Certificate, blk.Bytes)
			}
		}
	}
	if len(cert.Certificate) == 0 {
		return nil, &KeyError{certSerial, "certificate", errors.New("no certificate in the payload")}
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, &KeyError{certSerial, "certificate", err}
	}
	cert.Leaf = leaf
	der := kb
	if blk, _ := pem.Decode(kb); blk != nil {
		der = blk.Bytes
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		cert.PrivateKey = k
	} else if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		cert.PrivateKey = k
	} else if k, err := x509.ParseECPrivateKey(der); err == nil {
		cert.PrivateKey = k
	} else {
		return nil, &KeyError{keySerial, "private key", errors.New("not a PKCS#8, PKCS#1 or EC private key")}
	}
	return &cert, nil
}

// agentKeyring is where the agent links keyrings and puts keys: the user
// keyring. A session or process keyring would not do in Go: the kernel
// creates one for the calling thread only, and the runtime's other threads
// would not possess its keys; every thread without a session keyring
// possesses the user keyring through the user-session keyring.
const agentKeyring = unix.KEY_SPEC_USER_KEYRING

// peerKeyLifetime bounds how long a peer certificate key outlives the
// handshake (the consumer takes its own reference when it looks it up).
const peerKeyLifetime = 10 * 60 // seconds

// addPeerCert puts the peer's certificate in the keyring as an "asymmetric"
// key, as tlshd does, and returns its serial for the DONE message's
// remote-auth.
func addPeerCert(der []byte, desc string) (int32, error) {
	id, err := unix.AddKey("asymmetric", desc, der, agentKeyring)
	if err != nil {
		return 0, fmt.Errorf("add the peer's certificate to the user keyring as an asymmetric key: %w", err)
	}
	unix.KeyctlInt(unix.KEYCTL_SET_TIMEOUT, id, peerKeyLifetime, 0, 0)
	return int32(id), nil
}

// linkKeyrings links the configured keyrings and the kernel consumers' own
// (.nvme, .nfs, .nfsd, where they exist) into the agent's keyring, so that
// their keys can be read. A configured keyring that cannot
// be found is an error; a consumer's that does not exist is skipped.
func linkKeyrings(names []string) ([]string, error) {
	var linked []string
	for _, n := range names {
		id, err := resolveKeyring(n)
		if err != nil {
			return linked, err
		}
		if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, int(id), agentKeyring, 0, 0); err != nil {
			return linked, &KeyError{id, "keyring", fmt.Errorf("link %q into the user keyring: %w", n, err)}
		}
		linked = append(linked, n)
	}
	for _, n := range []string{".nvme", ".nfs", ".nfsd"} {
		id, err := resolveKeyring(n)
		if err != nil {
			continue
		}
		if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, int(id), agentKeyring, 0, 0); err == nil {
			linked = append(linked, n)
		}
	}
	return linked, nil
}

// resolveKeyring takes a serial number (decimal or 0x hex) or a keyring's
// name, looked up in /proc/keys.
func resolveKeyring(name string) (int32, error) {
	if v, err := strconv.ParseInt(name, 0, 32); err == nil {
		return int32(v), nil
	}
	f, err := os.Open("/proc/keys")
	if err != nil {
		return 0, fmt.Errorf("keyring %q: %w", name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// serial flags usage timeout perm uid gid type description: summary
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || fields[7] != "keyring" {
			continue
		}
		desc := strings.TrimSuffix(fields[8], ":")
		if desc != name {
			continue
		}
		v, err := strconv.ParseUint(fields[0], 16, 32)
		if err != nil {
			continue
		}
		return int32(v), nil
	}
	return 0, fmt.Errorf("keyring %q: no keyring of that name in /proc/keys (give its serial number, or check that it exists and that this process may view it)", name)
}

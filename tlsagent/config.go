package tlsagent

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// DefaultConfigPath is where tlshd reads its configuration, and so where the
// agent looks by default.
const DefaultConfigPath = "/etc/tlshd/config"

// Config is what the agent takes from a tlshd-style configuration file: the
// keys of tlshd.conf(5) that mean the same here. The zero Config serves
// clients that verify servers against the system's trust store and present no
// certificate, and no server role.
type Config struct {
	// Keyrings are the auxiliary keyrings ([authenticate] keyrings), by
	// name or serial number, linked into the agent's session keyring as
	// tlshd does, besides .nvme, .nfs and .nfsd where they exist.
	Keyrings []string
	// Client and Server are [authenticate.client] and [authenticate.server].
	Client, Server Side
	// LogLevel is [debug] loglevel: above 0 the agent logs each step.
	LogLevel int
	// Ignored lists keys that were read but have no effect here, for a
	// warning at startup (x509.pq.*: no post-quantum certificates in
	// crypto/tls; [debug] tls and nl).
	Ignored []string
}

// Side is the x509 material of one role.
type Side struct {
	TrustStore  string // x509.truststore: PEM trust anchors ("" = the system's)
	Certificate string // x509.certificate: PEM certificate chain presented when the consumer passes none
	PrivateKey  string // x509.private_key: its PEM private key

	roots *x509.CertPool
	cert  *tls.Certificate
}

// LoadConfig reads and checks a configuration file: the files it names must
// load (a certificate without its key, or a key file that does not match, is
// an error here rather than a failed handshake later).
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tlsagent: configuration: %w", err)
	}
	defer f.Close()
	c, err := ParseConfig(f)
	if err != nil {
		return nil, fmt.Errorf("tlsagent: configuration %s: %w", path, err)
	}
	if err := c.load(); err != nil {
		return nil, fmt.Errorf("tlsagent: configuration %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses tlshd.conf syntax (a GLib key file: [sections],
// key=value lines, # comments) without loading the files it names; see
// [LoadConfig]. Keys the agent cannot honour and must not ignore (x509.crl:
// crypto/tls checks no revocation lists; a private key that is a PKCS#11 URL)
// are errors.
func ParseConfig(r io.Reader) (*Config, error) {
	c := &Config{}
	section := ""
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			if !strings.HasSuffix(s, "]") {
				return nil, fmt.Errorf("line %d: section header %q has no closing ]", line, s)
			}
			section = strings.TrimSpace(s[1 : len(s)-1])
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not key=value", line, s)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := c.set(section, k, v); err != nil {
			return nil, fmt.Errorf("line %d: [%s] %s: %w", line, section, k, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) set(section, k, v string) error {
	var side *Side
	switch section {
	case "debug":
		switch k {
		case "loglevel":
			n, err := parseInt(v)
			if err != nil {
				return err
			}
			c.LogLevel = n
		default:
			c.Ignored = append(c.Ignored, "[debug] "+k)
		}
		return nil
	case "authenticate":
		if k != "keyrings" {
			return errors.New("unknown key (tlshd.conf has only keyrings here)")
		}
		for _, r := range strings.Split(v, ";") {
			if r = strings.TrimSpace(r); r != "" {
				c.Keyrings = append(c.Keyrings, r)
			}
		}
		return nil
	case "authenticate.client":
		side = &c.Client
	case "authenticate.server":
		side = &c.Server
	default:
		return errors.New("unknown section (tlshd.conf has [debug], [authenticate], [authenticate.client], [authenticate.server])")
	}
	switch k {
	case "x509.truststore":
		side.TrustStore = v
	case "x509.certificate":
		side.Certificate = v
	case "x509.private_key":
		if strings.Contains(v, ":") && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "./") {
			return fmt.Errorf("%q looks like a key URL (GnuTLS's pkcs11:, tpmkey:): this agent reads key files only; prefix a relative path with ./", v)
		}
		side.PrivateKey = v
	case "x509.crl":
		return errors.New("revocation lists are not supported (crypto/tls checks none): remove the key, or run tlshd")
	case "x509.pq.certificate", "x509.pq.private_key":
		c.Ignored = append(c.Ignored, "["+section+"] "+k)
	default:
		return errors.New("unknown key")
	}
	return nil
}

func parseInt(v string) (int, error) {
	n := 0
	if v == "" {
		return 0, errors.New("empty value, want a number")
	}
	for _, ch := range v {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		n = n*10 + int(ch-'0')
		if n > 1<<20 {
			return 0, fmt.Errorf("%q is too large", v)
		}
	}
	return n, nil
}

// load reads the files the configuration names.
func (c *Config) load() error {
	for _, s := range []struct {
		name string
		side *Side
	}{{"authenticate.client", &c.Client}, {"authenticate.server", &c.Server}} {
		if err := s.side.load(); err != nil {
			return fmt.Errorf("[%s]: %w", s.name, err)
		}
	}
	return nil
}

func (s *Side) load() error {
	if s.TrustStore != "" {
		b, err := os.ReadFile(s.TrustStore)
		if err != nil {
			return fmt.Errorf("x509.truststore: %w", err)
		}
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(b) {
			return fmt.Errorf("x509.truststore %s: no PEM certificate in it", s.TrustStore)
		}
		s.roots = p
	}
	switch {
	case s.Certificate != "" && s.PrivateKey != "":
		cert, err := tls.LoadX509KeyPair(s.Certificate, s.PrivateKey)
		if err != nil {
			return fmt.Errorf("x509.certificate %s with x509.private_key %s: %w", s.Certificate, s.PrivateKey, err)
		}
		s.cert = &cert
	case s.Certificate != "":
		return fmt.Errorf("x509.certificate %s is set without x509.private_key", s.Certificate)
	case s.PrivateKey != "":
		return fmt.Errorf("x509.private_key %s is set without x509.certificate", s.PrivateKey)
	}
	return nil
}

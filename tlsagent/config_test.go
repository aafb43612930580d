package tlsagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kquic.dev/internal/testcerts"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(strings.NewReader(`
# tlshd's shipped file, filled in
[debug]
loglevel=2
tls=0
nl=0

[authenticate]
keyrings= .nvme; 0x1234 ;mykeys

[authenticate.client]
x509.truststore= /etc/ca.pem
x509.certificate = /etc/client.pem
x509.private_key= /etc/client-key.pem

[authenticate.server]
x509.truststore=/etc/ca2.pem
x509.certificate= /etc/server.pem
x509.private_key= ./server-key.pem
x509.pq.certificate= /etc/pq.pem
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.LogLevel != 2 || strings.Join(c.Keyrings, "|") != ".nvme|0x1234|mykeys" {
		t.Errorf("loglevel %d keyrings %q", c.LogLevel, c.Keyrings)
	}
	if c.Client.TrustStore != "/etc/ca.pem" || c.Client.Certificate != "/etc/client.pem" || c.Client.PrivateKey != "/etc/client-key.pem" {
		t.Errorf("client %+v", c.Client)
	}
	if c.Server.TrustStore != "/etc/ca2.pem" || c.Server.Certificate != "/etc/server.pem" || c.Server.PrivateKey != "./server-key.pem" {
		t.Errorf("server %+v", c.Server)
	}
	if strings.Join(c.Ignored, "|") != "[debug] tls|[debug] nl|[authenticate.server] x509.pq.certificate" {
		t.Errorf("ignored %q", c.Ignored)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[authenticate.client]\nx509.crl=/etc/crl.pem\n", "revocation"},
		{"[authenticate.server]\nx509.private_key=pkcs11:token=x\n", "key URL"},
		{"[authenticate.client]\nx509.trust=/x\n", "line 2: [authenticate.client] x509.trust: unknown key"},
		{"[nosuch]\na=b\n", "unknown section"},
		{"[debug]\nloglevel=high\n", "not a number"},
		{"[debug\n", "no closing ]"},
		{"[debug]\njunk\n", "not key=value"},
	} {
		_, err := ParseConfig(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.text, err, tc.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "config")
	os.WriteFile(good, []byte("[authenticate.server]\nx509.truststore="+testcerts.Path("ca.pem")+
		"\nx509.certificate="+testcerts.Path("server.pem")+"\nx509.private_key="+testcerts.Path("server-key.pem")+"\n"), 0o600)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.cert == nil || c.Server.cert.Leaf == nil || c.Server.cert.Leaf.Subject.CommonName == "" || c.Server.roots == nil {
		t.Errorf("server side not loaded: %+v", c.Server)
	}
	for _, tc := range []struct{ text, want string }{
		{"[authenticate.client]\nx509.certificate=" + testcerts.Path("client.pem") + "\n", "without x509.private_key"},
		{"[authenticate.client]\nx509.truststore=" + filepath.Join(dir, "none.pem") + "\n", "no such file"},
		{"[authenticate.client]\nx509.truststore=" + good + "\n", "no PEM certificate"},
		{"[authenticate.client]\nx509.certificate=" + testcerts.Path("client.pem") + "\nx509.private_key=" + testcerts.Path("server-key.pem") + "\n", "private key does not match"},
	} {
		p := filepath.Join(dir, "bad")
		os.WriteFile(p, []byte(tc.text), 0o600)
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.text, err, tc.want)
		}
	}
	if _, err := LoadConfig(filepath.Join(dir, "absent")); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("absent file: %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

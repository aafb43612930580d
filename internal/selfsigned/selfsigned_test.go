package selfsigned

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

func TestNewVerifies(t *testing.T) {
	c, pool, err := New(Options{Names: []string{"server.test"}, Pad: 9000})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"server.test", "127.0.0.1", "::1"} {
		if _, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(c.Certificate[0]) < 9000 {
		t.Errorf("padded certificate of %d bytes", len(c.Certificate[0]))
	}
	cert, key, err := PEM(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		t.Fatalf("the PEM does not load: %v", err)
	}
	if b, _ := pem.Decode(cert); b == nil || b.Type != "CERTIFICATE" {
		t.Fatal("no certificate block")
	}
	if _, _, err := New(Options{}); err == nil {
		t.Fatal("a certificate without a name")
	}
}

package testcerts_test

import (
	"crypto/x509"
	"testing"
	"time"

	"kquic.dev/internal/testcerts"
)

func TestFixturesVerify(t *testing.T) {
	pool, err := testcerts.Pool()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := testcerts.Server()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := testcerts.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		der   []byte
		name  string
		usage x509.ExtKeyUsage
	}{
		{srv.Certificate[0], "server.test", x509.ExtKeyUsageServerAuth},
		{srv.Certificate[0], "127.0.0.1", x509.ExtKeyUsageServerAuth},
		{srv.Certificate[0], "::1", x509.ExtKeyUsageServerAuth},
		{cli.Certificate[0], "", x509.ExtKeyUsageClientAuth},
	} {
		cert, err := x509.ParseCertificate(c.der)
		if err != nil {
			t.Fatal(err)
		}
		// A year of margin, so the fixtures are renewed long before they expire.
		at := time.Now().AddDate(1, 0, 0)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: c.name, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{c.usage}}); err != nil {
			t.Errorf("%s for %q: %v (run go generate ./internal/testcerts)", cert.Subject.CommonName, c.name, err)
		}
	}
}

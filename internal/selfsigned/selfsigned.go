// Package selfsigned makes throwaway certificates for tools and tests: one
// self-signed certificate, its own CA, for a server's names and loopback
// addresses, and a pool that trusts it.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Options say what the certificate is for.
type Options struct {
	// Names are its DNS names; the first is its common name.
	Names []string
	// IPs are its addresses (default 127.0.0.1 and ::1).
	IPs []net.IP
	// Valid is how long it is valid from an hour ago (default a year).
	Valid time.Duration
	// Pad adds an unused extension of that many bytes, to make the
	// certificate large (a server's first flight past the amplification
	// limit).
	Pad int
}

// New makes a P-256 certificate for o and a pool that trusts it.
func New(o Options) (tls.Certificate, *x509.CertPool, error) {
	if len(o.Names) == 0 {
		return tls.Certificate{}, nil, fmt.Errorf("selfsigned: no name")
	}
	if o.IPs == nil {
		o.IPs = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	if o.Valid == 0 {
		o.Valid = 365 * 24 * time.Hour
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: o.Names[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(o.Valid),
		DNSNames: o.Names, IPAddresses: o.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if o.Pad > 0 {
		tmpl.ExtraExtensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, Value: make([]byte, o.Pad)}}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

// PEM returns the certificate and its key in PEM, for programs.
func PEM(c tls.Certificate) (cert, key []byte, err error) {
	k, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	for _, der := range c.Certificate {
		cert = append(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}), nil
}

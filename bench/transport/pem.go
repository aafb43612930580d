//go:build linux

package transport

import (
	"crypto/x509"
	"encoding/pem"
)

// CertificatePEM returns this process's benchmark certificate and its
// private key in PEM, for a tool outside this process that must present the
// same certificate (the module's perf_test server in kqbench matrix
// --driver native).
func CertificatePEM() (cert, key []byte, err error) {
	pair, _, err := benchCert()
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	cert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]})
	key = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return cert, key, nil
}

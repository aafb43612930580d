//go:build linux

package ktls_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"

	"kquic.dev/ktls"
)

// Example serves a file over kernel TLS: the handshake runs in crypto/tls,
// then the kernel encrypts, and io.Copy from the file becomes sendfile.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	cert, err := tls.LoadX509KeyPair("cert.pem", "key.pem")
	if err != nil {
		fmt.Println("no certificate:", err)
		return
	}
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			c, err := ktls.Server(context.Background(), nc, &ktls.Config{
				TLS:      &tls.Config{Certificates: []tls.Certificate{cert}},
				Fallback: true, // keep serving on kernels without kTLS
			})
			if err != nil {
				fmt.Println(err) // names the failed step and what to do
				return
			}
			defer c.Close()
			if !c.KernelTLS() {
				fmt.Println("userspace TLS:", c.FallbackReason())
			}
			f, err := os.Open("index.html")
			if err != nil {
				return
			}
			defer f.Close()
			io.Copy(c, f) // sendfile(2) when c.KernelTLS()
		}()
	}
}

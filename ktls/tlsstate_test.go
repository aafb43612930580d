//go:build linux

package ktls

import (
	"crypto/tls"
	"io"
	"net"
	"runtime"
	"testing"
)

// TestTLSInternals pins what tlsstate.go reads from crypto/tls. If it fails
// after a Go upgrade, crypto/tls moved in.seq/out.seq or its buffers: update
// tlsstate.go before trusting kernel TLS on that Go version.
func TestTLSInternals(t *testing.T) {
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	ccfg := clientConfig(t, tls.VersionTLS13)
	ccfg.ClientSessionCache = tls.NewLRUClientSessionCache(1) // so the server sends a ticket
	cli := tls.Client(c, ccfg)
	srv := tls.Server(s, serverConfig(t, tls.VersionTLS13))
	errc := make(chan error, 1)
	go func() {
		if err := srv.Handshake(); err != nil {
			errc <- err
			return
		}
		_, err := srv.Write([]byte("0123456789"))
		errc <- err
	}()
	if err := cli.Handshake(); err != nil {
		t.Fatal(err)
	}
	in, out, err := tlsSeqs(cli)
	if err != nil {
		t.Fatalf("%s: %v", runtime.Version(), err)
	}
	if in != 0 || out != 0 {
		t.Fatalf("client seqs after handshake: in %d out %d, want 0 0", in, out)
	}
	// Over a pipe crypto/tls may already hold the ticket it read greedily
	// (which is why the handshake runs on a recordConn); only the reading
	// itself is checked here.
	if _, err := tlsBuffered(cli); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(cli, buf); err != nil { // reads the ticket(s) and the data record
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	_, sout, err := tlsSeqs(srv)
	if err != nil {
		t.Fatal(err)
	}
	cin, _, _ := tlsSeqs(cli)
	if cin != sout || sout < 2 {
		t.Fatalf("client in.seq %d, server out.seq %d; want equal and >= 2 (ticket + data)", cin, sout)
	}
	// 6 bytes of the record remain in crypto/tls's input buffer.
	if n, err := tlsBuffered(cli); err != nil || n != 6 {
		t.Fatalf("client buffered %d, %v; want 6", n, err)
	}
}

//go:build linux

package vmpeer_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kquic.dev/bench/transport"
	"kquic.dev/internal/testenv"
	"kquic.dev/kmod/vm"
)

// The hashed exchange's parts, run by this test binary in each guest.
const (
	hashEnv     = "KQVM_VMPEER_HASH" // "send DIR" or "recv DIR"
	hashBytes   = 4 << 20            // each transport's payload
	hashPort    = 7300               // the first transport's port; then +1 each
	hashTimeout = 3 * time.Minute
)

// hashTransports are the transports exchanged, kquic where both guests
// load the module.
func hashTransports(kquic bool) []string {
	if kquic {
		return []string{"kquic", "ktls", "tcp", "quic-go"}
	}
	return []string{"ktls", "tcp", "quic-go"}
}

// hashResult is what guest A prints per transport.
type hashResult struct {
	Transport string `json:"transport"`
	Sent      int64  `json:"sent"`
	Hash      string `json:"hash"`
	PeerHash  string `json:"peer_hash"`
	Err       string `json:"err,omitempty"`
}

// TestHashedAcrossGuests: guest A sends 4 MiB over each of kquic (with
// $KQUIC_MODULE in both guests), ktls, tcp and quic-go through the
// transports the matrix measures with, to guest B across the virtio-net
// link; B answers each with the SHA-256 of what it read, which must be A's.
func TestHashedAcrossGuests(t *testing.T) {
	if part := os.Getenv(hashEnv); part != "" {
		hashPart(part)
		return
	}
	mod := quicModule(t)
	cfg := testenv.VM(t)
	cfg.Timeout = 5 * time.Minute
	cfg.Load = append(cfg.Load, "tls")
	if mod != "" {
		cfg.ModuleFiles = []string{mod}
	}
	dir := t.TempDir() // B's certificate goes to A through it
	cfg.Shares = []string{dir}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg, cfg
	var outA, errA bytes.Buffer
	outB := &syncBuffer{} // B's output and standard error at once
	a.Env = append(os.Environ(), hashEnv+"=send "+dir)
	b.Env = append(os.Environ(), hashEnv+"=recv "+dir)
	a.Stdout, a.Stderr, b.Stdout, b.Stderr = &outA, &errA, outB, outB
	link := vm.Link{}
	if os.Geteuid() != 0 {
		link.Backend = vm.LinkSocket
	}
	args := []string{exe, "-test.run=^TestHashedAcrossGuests$"}
	res, err := vm.RunPair(context.Background(), vm.PairConfig{A: a, B: b, ArgsA: args, ArgsB: args, Link: link, PeerGrace: 5 * time.Second})
	t.Logf("guest A:\n%s%s\nguest B:\n%s", outA.String(), errA.String(), outB.String())
	if err != nil {
		t.Fatalf("RunPair: %v", err)
	}
	assertGone(t, res)
	if res.A.Info == nil || res.B.Info == nil || res.A.Info.BootID == res.B.Info.BootID {
		t.Errorf("guest infos %+v, %+v: want two kernels", res.A.Info, res.B.Info)
	}
	got := map[string]hashResult{}
	sc := bufio.NewScanner(&outA)
	for sc.Scan() {
		var r hashResult
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Transport != "" {
			got[r.Transport] = r
		}
	}
	for _, name := range hashTransports(mod != "") {
		r, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: guest A reported no exchange", name)
		case r.Err != "":
			t.Errorf("%s: %s", name, r.Err)
		case r.Sent != hashBytes || r.Hash == "" || r.Hash != r.PeerHash:
			t.Errorf("%s: A sent %d bytes hashing %s; B read bytes hashing %s", name, r.Sent, r.Hash, r.PeerHash)
		}
	}
	if mod == "" {
		t.Log("kquic not exchanged: $KQUIC_MODULE names no quic.ko")
	}
}

// hashPart is a guest's part: B serves every transport, A sends to each.
func hashPart(part string) {
	role, dir, _ := strings.Cut(part, " ")
	kq, err := transport.Get("kquic")
	kquic := err == nil && kq.Available() == nil
	if role == "recv" {
		err = hashServe(dir, hashTransports(kquic))
	} else {
		err = hashSend(dir, hashTransports(kquic))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hash", role+":", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// hashServe listens on every transport, then writes this process's
// certificate for A, and answers one stream each with the SHA-256 of the
// bytes it carried.
func hashServe(dir string, names []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hashTimeout)
	defer cancel()
	addr, err := netip.ParseAddr(os.Getenv("KQVM_ADDR"))
	if err != nil {
		return fmt.Errorf("$KQVM_ADDR %q: %w", os.Getenv("KQVM_ADDR"), err)
	}
	o := transport.Options{Crypto: true, GSO: true}
	var lns []transport.Listener
	for i, name := range names {
		tr, err := transport.Get(name)
		if err != nil {
			return err
		}
		ln, err := tr.Listen(ctx, netip.AddrPortFrom(addr, uint16(hashPort+i)), o)
		if err != nil {
			return fmt.Errorf("%s: listen: %w", name, err)
		}
		defer ln.Close()
		lns = append(lns, ln)
	}
	cert, err := transport.Certificate()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.tmp"), cert, 0o644); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, "cert.tmp"), filepath.Join(dir, "cert")); err != nil {
		return err
	}
	errs := make([]error, len(lns))
	var wg sync.WaitGroup
	for i, ln := range lns {
		wg.Go(func() {
			s, err := ln.Accept(ctx)
			if err != nil {
				errs[i] = fmt.Errorf("%s: accept: %w", names[i], err)
				return
			}
			defer s.Close()
			var n uint64
			if err := binary.Read(s, binary.BigEndian, &n); err != nil {
				errs[i] = fmt.Errorf("%s: length: %w", names[i], err)
				return
			}
			h := sha256.New()
			if _, err := io.CopyN(h, s, int64(n)); err != nil {
				errs[i] = fmt.Errorf("%s: body: %w", names[i], err)
				return
			}
			if _, err := s.Write(h.Sum(nil)); err != nil {
				errs[i] = fmt.Errorf("%s: answer: %w", names[i], err)
				return
			}
			// Wait for A to close, so that the answer is not cut off.
			io.Copy(io.Discard, s)
			fmt.Printf("%s: read %d bytes\n", names[i], n)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// hashSend waits for B's certificate, then sends each transport's payload
// and prints what B answered (a JSON line per transport).
func hashSend(dir string, names []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), hashTimeout)
	defer cancel()
	var cert []byte
	for { // B writes it once listening; the share has no event to wait for
		var err error
		if cert, err = os.ReadFile(filepath.Join(dir, "cert")); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("guest B wrote no certificate into %s: %w", dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	peer, err := netip.ParseAddr(os.Getenv("KQVM_PEER"))
	if err != nil {
		return fmt.Errorf("$KQVM_PEER %q: %w", os.Getenv("KQVM_PEER"), err)
	}
	enc := json.NewEncoder(os.Stdout)
	for i, name := range names {
		r := hashResult{Transport: name}
		r.Sent, r.Hash, r.PeerHash, err = hashOne(ctx, name, netip.AddrPortFrom(peer, uint16(hashPort+i)), cert, int64(i))
		if err != nil {
			r.Err = err.Error()
		}
		enc.Encode(r)
	}
	return nil
}

// hashOne sends hashBytes of pseudo-random data over one stream of
// transport name and reads back the peer's SHA-256 of them.
func hashOne(ctx context.Context, name string, addr netip.AddrPort, cert []byte, seed int64) (sent int64, hash, peerHash string, err error) {
	tr, err := transport.Get(name)
	if err != nil {
		return 0, "", "", err
	}
	d, err := tr.Dial(ctx, addr, transport.Options{Crypto: true, GSO: true, PeerCert: cert})
	if err != nil {
		return 0, "", "", fmt.Errorf("dial %s: %w", addr, err)
	}
	defer d.Close()
	s, err := d.Open(ctx)
	if err != nil {
		return 0, "", "", fmt.Errorf("open a stream: %w", err)
	}
	defer s.Close()
	if err := binary.Write(s, binary.BigEndian, uint64(hashBytes)); err != nil {
		return 0, "", "", err
	}
	h := sha256.New()
	src := io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), hashBytes)
	if sent, err = io.Copy(io.MultiWriter(s, h), src); err != nil {
		return sent, "", "", fmt.Errorf("send: %w", err)
	}
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(s, sum[:]); err != nil {
		return sent, "", "", fmt.Errorf("the peer's hash: %w", err)
	}
	return sent, hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(sum[:]), nil
}

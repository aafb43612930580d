package kquic_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"kquic.dev/kquic"
)

// TestFuncFlowControlCredit: a writer held back by the stream's flow
// control turns the kernel's MAX_STREAM_DATA event on while it waits, goes
// on as the reader grants credit, and turns the event off again (it would
// otherwise wake the connection's receiver for every MAX_STREAM_DATA). An
// application that asked for the event keeps it.
func TestFuncFlowControlCredit(t *testing.T) {
	for _, asked := range []bool{false, true} {
		name := map[bool]string{false: "internal", true: "asked"}[asked]
		t.Run(name, func(t *testing.T) {
			ccfg := &kquic.Config{}
			if asked {
				ccfg.Events = []kquic.EventType{kquic.EventStreamMaxData}
			}
			scfg := &kquic.Config{Transport: kquic.TransportParameters{MaxStreamDataBidiRemote: 4096}}
			cli, srv := pair(t, ccfg, scfg)
			on := func() bool {
				t.Helper()
				v, err := kquic.KernelEventOn(cli, kquic.EventStreamMaxData)
				if err != nil {
					t.Fatalf("query the MAX_STREAM_DATA event: %v", err)
				}
				return v
			}
			if got := on(); got != asked {
				t.Fatalf("MAX_STREAM_DATA event on before any write: %v, want %v", got, asked)
			}
			const total = 64 << 10
			data := bytes.Repeat([]byte("0123456789abcdef"), total/16)
			s, err := cli.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			s.SetWriteDeadline(time.Now().Add(30 * time.Second))
			wrote := make(chan error, 1)
			go func() {
				for off := 0; off < total; off += 1024 {
					if _, err := s.Write(data[off : off+1024]); err != nil {
						wrote <- err
						return
					}
				}
				wrote <- s.Close()
			}()
			// The writer stops at the 4 KiB of credit with the event on.
			deadline := time.Now().Add(10 * time.Second)
			for !on() {
				if time.Now().After(deadline) {
					t.Fatal("the writer held back by flow control did not turn the MAX_STREAM_DATA event on")
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case err := <-wrote:
				t.Fatalf("64 KiB written against 4 KiB of credit before the peer read: %v", err)
			default:
			}
			r, err := srv.AcceptStream(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			r.SetReadDeadline(time.Now().Add(30 * time.Second))
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, total)
			}
			if err := <-wrote; err != nil {
				t.Fatalf("write: %v", err)
			}
			if got := on(); got != asked {
				t.Errorf("MAX_STREAM_DATA event on after the writer finished: %v, want %v", got, asked)
			}
		})
	}
}

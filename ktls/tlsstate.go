package ktls

import (
	"crypto/tls"
	"fmt"
	"reflect"
	"runtime"
)

// This file is the only place that looks inside crypto/tls. It reads (never
// writes) two things through reflect, which allows reading unexported fields
// without package unsafe:
//
//   - the record sequence numbers, (*tls.Conn).in.seq and .out.seq. After the
//     handshake they count the records each side already protected with the
//     application keys: a Go TLS 1.3 server has sent its NewSessionTickets, a
//     TLS 1.2 side has sent or received Finished. Reading them is exact
//     whatever the peer, the ticket count or the record coalescing, which
//     counting ciphertext records on the wire cannot be (TLS 1.3 records all
//     look alike from outside).
//   - the lengths of crypto/tls's buffers (rawInput, input, hand), to prove
//     that it holds no bytes it read past the handshake.
//
// TestTLSInternals fails loudly if a Go release changes this layout; the
// error returned here names the Go version so the failure is obvious at run
// time as well.

// tlsSeqs returns the next receive and send sequence numbers of c.
func tlsSeqs(c *tls.Conn) (in, out uint64, err error) {
	v := reflect.ValueOf(c).Elem()
	if in, err = seqOf(v, "in"); err != nil {
		return 0, 0, err
	}
	if out, err = seqOf(v, "out"); err != nil {
		return 0, 0, err
	}
	return in, out, nil
}

func seqOf(conn reflect.Value, half string) (uint64, error) {
	h := conn.FieldByName(half)
	if h.Kind() != reflect.Struct {
		return 0, internalsChanged("tls.Conn." + half)
	}
	seq := h.FieldByName("seq")
	if seq.Kind() != reflect.Array || seq.Len() != 8 || seq.Type().Elem().Kind() != reflect.Uint8 {
		return 0, internalsChanged("tls.Conn." + half + ".seq")
	}
	var n uint64
	for i := range 8 {
		n = n<<8 | seq.Index(i).Uint()
	}
	return n, nil
}

// tlsBuffered returns how many bytes crypto/tls holds unprocessed.
func tlsBuffered(c *tls.Conn) (int, error) {
	v := reflect.ValueOf(c).Elem()
	total := 0
	for _, name := range []string{"rawInput", "hand"} { // bytes.Buffer{buf []byte; off int; ...}
		b := v.FieldByName(name)
		buf, off := b.FieldByName("buf"), b.FieldByName("off")
		if buf.Kind() != reflect.Slice || off.Kind() != reflect.Int {
			return 0, internalsChanged("tls.Conn." + name)
		}
		total += buf.Len() - int(off.Int())
	}
	r := v.FieldByName("input") // bytes.Reader{s []byte; i int64; ...}
	s, i := r.FieldByName("s"), r.FieldByName("i")
	if s.Kind() != reflect.Slice || i.Kind() != reflect.Int64 {
		return 0, internalsChanged("tls.Conn.input")
	}
	total += s.Len() - int(i.Int())
	return total, nil
}

func internalsChanged(field string) error {
	return fmt.Errorf("ktls: crypto/tls internals changed in %s: %s is not where this package reads it; "+
		"update ktls/tlsstate.go (see TestTLSInternals) or set Config.Fallback", runtime.Version(), field)
}

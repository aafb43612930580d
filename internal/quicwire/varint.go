package quicwire

import (
	"errors"
	"fmt"
)

// MaxVarint is the largest value a QUIC variable-length integer can hold,
// 2^62-1 (RFC 9000 §16).
const MaxVarint = 1<<62 - 1

// ErrMalformed is wrapped by every decoding error: the bytes are truncated
// or do not follow the wire format.
var ErrMalformed = errors.New("quicwire: malformed")

// VarintLen is the number of bytes the shortest encoding of v takes: 1, 2, 4
// or 8. It panics for v > MaxVarint, which has no encoding.
func VarintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	case v <= MaxVarint:
		return 8
	}
	panic(fmt.Sprintf("quicwire: %d does not fit a varint (max %d)", v, uint64(MaxVarint)))
}

// AppendVarint appends the shortest encoding of v.
func AppendVarint(b []byte, v uint64) []byte {
	return AppendVarintLen(b, v, VarintLen(v))
}

// AppendVarintLen appends v encoded in exactly n bytes (1, 2, 4 or 8): a
// longer encoding than needed is valid QUIC, and peers must accept it. It
// panics when v does not fit in n bytes.
func AppendVarintLen(b []byte, v uint64, n int) []byte {
	switch n {
	case 1:
		if v < 1<<6 {
			return append(b, byte(v))
		}
	case 2:
		if v < 1<<14 {
			return append(b, 0x40|byte(v>>8), byte(v))
		}
	case 4:
		if v < 1<<30 {
			return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
	case 8:
		if v <= MaxVarint {
			return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
				byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
	default:
		panic(fmt.Sprintf("quicwire: varint length %d (want 1, 2, 4 or 8)", n))
	}
	panic(fmt.Sprintf("quicwire: %d does not fit a %d-byte varint", v, n))
}

// ReadVarint decodes the varint at the start of b and returns it with the
// number of bytes it took.
func ReadVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: varint: no bytes", ErrMalformed)
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, fmt.Errorf("%w: varint: %d-byte encoding, %d bytes left", ErrMalformed, n, len(b))
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, nil
}

// reader consumes a buffer field by field; the first error sticks.
type reader struct {
	b    []byte
	off  int
	err  error
	what string
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s: %s", ErrMalformed, r.what, fmt.Sprintf(format, args...))
	}
}

func (r *reader) varint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n, err := ReadVarint(r.b[r.off:])
	if err != nil {
		r.fail("%s: truncated varint at offset %d", field, r.off)
		return 0
	}
	r.off += n
	return v
}

func (r *reader) bytes(field string, n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail("%s: %d bytes wanted, %d left", field, n, len(r.b)-r.off)
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *reader) byte1(field string) byte {
	s := r.bytes(field, 1)
	if s == nil {
		return 0
	}
	return s[0]
}

func (r *reader) rest() []byte {
	if r.err != nil {
		return nil
	}
	s := r.b[r.off:]
	r.off = len(r.b)
	return s
}

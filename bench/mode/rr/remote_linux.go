//go:build linux

package rr

import (
	"encoding/binary"
	"io"
	"sync/atomic"

	"kquic.dev/bench/matrix"
	"kquic.dev/bench/side"
)

// Mark is the marker of an rr stream: its server answers requests
// (Header).
const Mark = 'R'

func init() { side.RegisterStream(Mark, answer) }

// Header is what an rr client writes first on its stream: the marker,
// then the request and response sizes, so that the server (local or a
// kqbench server on a peer) needs no other word of them.
func Header(req, resp int) []byte {
	b := make([]byte, 9)
	b[0] = Mark
	binary.BigEndian.PutUint32(b[1:5], uint32(req))
	binary.BigEndian.PutUint32(b[5:9], uint32(resp))
	return b
}

// answer is the server of an rr stream, after its marker: it reads the
// sizes, then answers every request with a response until the stream ends.
// Its buffers are allocated once; the loop is two calls.
func answer(s io.ReadWriteCloser, received *atomic.Int64) {
	var h [8]byte
	if _, err := io.ReadFull(s, h[:]); err != nil {
		return
	}
	req, resp := binary.BigEndian.Uint32(h[:4]), binary.BigEndian.Uint32(h[4:])
	if req == 0 || req > matrix.MaxSize || resp == 0 || resp > matrix.MaxSize {
		return
	}
	rb, wb := make([]byte, req), make([]byte, resp)
	for {
		if _, err := io.ReadFull(s, rb); err != nil {
			return
		}
		received.Add(int64(req))
		if _, err := s.Write(wb); err != nil {
			return
		}
	}
}

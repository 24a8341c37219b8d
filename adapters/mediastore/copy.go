package mediastore

import (
	"hash"
	"io"
	"sync"
)

// BufferSize is the copy buffer of a staged upload: large enough that a
// write and a hash step cost little per byte, small enough that many
// uploads at once stay cheap (buffers are pooled).
const BufferSize = 1 << 20

var buffers = sync.Pool{New: func() any { b := make([]byte, BufferSize); return &b }}

// copyHashed copies r to w and into h, a buffer at a time, and returns
// how many bytes it copied. Each buffer is filled before it is written, so
// a source that reads in small pieces still makes large writes.
func copyHashed(w io.Writer, h hash.Hash, r io.Reader) (int64, error) {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf := *bp
	var n int64
	for {
		k, rerr := fill(r, buf)
		if k > 0 {
			h.Write(buf[:k])
			if _, err := w.Write(buf[:k]); err != nil {
				return n, err
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// fill reads into buf until it is full or r fails, and returns r's error
// as it is (unlike io.ReadFull, which turns a short read into
// io.ErrUnexpectedEOF: a cut-off upload says so itself).
func fill(r io.Reader, buf []byte) (int, error) {
	k := 0
	for k < len(buf) {
		m, err := r.Read(buf[k:])
		k += m
		if err != nil {
			return k, err
		}
	}
	return k, nil
}

package mediastore

import (
	"hash"
	"io"
	"sync"
)

// The copy buffers of a staged upload: bufferCount buffers of BufferSize
// bytes, so that hashing one (on another core) overlaps writing the next.
// 256 KiB stays in a core's cache between the write and the hash (4 MiB
// buffers ran at half the speed), and 768 KiB an upload keeps many
// uploads at once cheap (sets are pooled). Measured in
// docs/media-storage.md.
const (
	BufferSize  = 256 << 10
	bufferCount = 3
)

var bufferSets = sync.Pool{New: func() any {
	set := make([][]byte, bufferCount)
	for i := range set {
		set[i] = make([]byte, BufferSize)
	}
	return &set
}}

// copyHashed copies r to w and into h and returns how many bytes it
// copied. Each buffer is filled before it is written, so a source that
// reads in small pieces still makes large writes; h hashes a buffer in its
// own goroutine while w writes it, so a copy runs at the pace of the
// slower of the two rather than of both in turn.
func copyHashed(w io.Writer, h hash.Hash, r io.Reader) (int64, error) {
	setp := bufferSets.Get().(*[][]byte)
	free := make(chan []byte, bufferCount)
	for _, b := range *setp {
		free <- b
	}
	toHash := make(chan []byte, bufferCount)
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for b := range toHash {
			h.Write(b)
			free <- b[:cap(b)]
		}
	}()
	n, err := copyLoop(w, r, free, toHash)
	close(toHash)
	<-hashed
	bufferSets.Put(setp)
	return n, err
}

// copyLoop fills free buffers from r, hands each to the hasher and writes
// it; a buffer comes back to free only once hashed, and is reused only
// after this loop wrote it.
func copyLoop(w io.Writer, r io.Reader, free <-chan []byte, toHash chan<- []byte) (int64, error) {
	var n int64
	for {
		buf := <-free
		k, rerr := fill(r, buf)
		if k > 0 {
			toHash <- buf[:k]
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

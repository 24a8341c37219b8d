package local_test

import (
	"io"
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/local"
)

// zeros reads as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkStageCommit stages a 256 MiB stream (hashing it, syncing the
// file) and commits it, as an upload does; compare its MB/s with
// `dd if=/dev/zero of=DIR/x bs=1M count=256 conv=fsync` on the same
// filesystem (docs/media-storage.md).
func BenchmarkStageCommit(b *testing.B) {
	const size = 256 << 20
	s, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		st, err := s.Stage(b.Context(), io.LimitReader(zeros{}, size), 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(b.Context(), st, "bench/x"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Delete(b.Context(), "bench/x"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// Package storetest is the contract of the media storage port: one suite
// that every driver (local, s3) runs against a real store of its kind.
//
// It uses the standard library only; big objects come from a seeded
// math/rand/v2 ChaCha8 stream, so no test holds them in memory.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/media"
)

// Storage is the media storage port, as its users (commands/media, the
// HTTP media routes) declare it. See docs/media-storage.md.
type Storage interface {
	// Stage streams r into a temporary object while hashing it (SHA-256). More than limit bytes
	// (limit > 0): an error of kind fault.TooLarge ("larger than N bytes") and nothing left behind.
	// A read error from r (a cut-off upload, ctx cancelled): that error, nothing left behind.
	Stage(ctx context.Context, r io.Reader, limit int64) (media.Staged, error)
	// OpenStaged re-reads a staged object from its start (to probe or scan it).
	OpenStaged(ctx context.Context, s media.Staged) (io.ReadSeekCloser, error)
	// Commit keeps a staged object under key, atomically (readers see all of it or nothing); if key
	// already exists, the staged object is dropped and key kept as it is (identical bytes are stored once).
	Commit(ctx context.Context, s media.Staged, key string) error
	// Discard drops a staged object (idempotent).
	Discard(ctx context.Context, s media.Staged) error
	// Put writes r under key atomically (a derived image); replaces what was there.
	Put(ctx context.Context, key string, r io.Reader) error
	// Open reads a kept object; seekable (HTTP Range). Missing: an error wrapping fs.ErrNotExist.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, media.ObjectInfo, error)
	// Stat: size and time, or an error wrapping fs.ErrNotExist.
	Stat(ctx context.Context, key string) (media.ObjectInfo, error)
	// Delete removes key (idempotent: missing is not an error).
	Delete(ctx context.Context, key string) error
	// Sweep removes staged objects older than age (abandoned uploads); returns how many.
	Sweep(ctx context.Context, age time.Duration) (int, error)
}

// Run runs the contract against stores made by open: each case gets a
// new, empty store.
func Run(t *testing.T, open func(t *testing.T) Storage) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Storage)
	}{
		{"RoundTrip", testRoundTrip},
		{"Empty", testEmpty},
		{"Dedup", testDedup},
		{"Limit", testLimit},
		{"ReaderError", testReaderError},
		{"Cancelled", testCancelled},
		{"Discard", testDiscard},
		{"Put", testPut},
		{"Missing", testMissing},
		{"Seek", testSeek},
		{"Delete", testDelete},
		{"BadKeys", testBadKeys},
		{"BadTokens", testBadTokens},
		{"Sweep", testSweep},
		{"ConcurrentCommits", testConcurrentCommits},
		{"Large", testLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

// data is n pseudo-random bytes, different for each seed.
func data(seed uint64, n int) []byte {
	b := make([]byte, n)
	_, _ = generator(seed, int64(n)).Read(b)
	return b
}

// generator streams n pseudo-random bytes without holding them.
func generator(seed uint64, n int64) io.Reader {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	return io.LimitReader(rand.NewChaCha8(s), n)
}

func shaHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func stage(t *testing.T, s Storage, b []byte) media.Staged {
	t.Helper()
	st, err := s.Stage(t.Context(), bytes.NewReader(b), 0)
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	return st
}

func put(t *testing.T, s Storage, key string, b []byte) {
	t.Helper()
	if err := s.Put(t.Context(), key, bytes.NewReader(b)); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

func commit(t *testing.T, s Storage, b []byte, key string) {
	t.Helper()
	if err := s.Commit(t.Context(), stage(t, s, b), key); err != nil {
		t.Fatalf("Commit %s: %v", key, err)
	}
}

// read is the whole object under key, checking that Open's size agrees.
func read(t *testing.T, s Storage, key string) []byte {
	t.Helper()
	r, info, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if info.Size != int64(len(b)) {
		t.Fatalf("Open %s: size %d, read %d bytes", key, info.Size, len(b))
	}
	return b
}

func readStaged(t *testing.T, s Storage, st media.Staged) []byte {
	t.Helper()
	r, err := s.OpenStaged(t.Context(), st)
	if err != nil {
		t.Fatalf("OpenStaged: %v", err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read staged: %v", err)
	}
	return b
}

func wantBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes (sha %s), want %d bytes (sha %s)",
			what, len(got), shaHex(got)[:12], len(want), shaHex(want)[:12])
	}
}

func wantMissing(t *testing.T, s Storage, key string) {
	t.Helper()
	if _, err := s.Stat(t.Context(), key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat %s: %v, want fs.ErrNotExist", key, err)
	}
	r, _, err := s.Open(t.Context(), key)
	if err == nil {
		r.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open %s: %v, want fs.ErrNotExist", key, err)
	}
}

// wantNoStaged checks that nothing is staged: Sweep(0) finds nothing.
func wantNoStaged(t *testing.T, s Storage) {
	t.Helper()
	n, err := s.Sweep(t.Context(), 0)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if n != 0 {
		t.Fatalf("Sweep(0) removed %d staged objects, want none left behind", n)
	}
}

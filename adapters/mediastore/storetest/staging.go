package storetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

const blobKey = "blobs/ab/abcdef"

// testRoundTrip: staged bytes are hashed and sized exactly, re-read from
// the start, and kept bytes read back as they were.
func testRoundTrip(t *testing.T, s Storage) {
	b := data(1, 3<<20+17)
	st := stage(t, s, b)
	if st.Size != int64(len(b)) || st.SHA256 != shaHex(b) {
		t.Fatalf("Stage: size %d sha %s, want %d %s", st.Size, st.SHA256, len(b), shaHex(b))
	}
	wantBytes(t, "staged", readStaged(t, s, st), b)
	wantBytes(t, "staged again", readStaged(t, s, st), b)
	key := media.BlobKey(st.SHA256)
	wantMissing(t, s, key)
	if err := s.Commit(t.Context(), st, key); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantBytes(t, "kept", read(t, s, key), b)
	info, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if info.Size != int64(len(b)) {
		t.Fatalf("Stat: size %d, want %d", info.Size, len(b))
	}
	if d := time.Since(info.ModTime); d < -time.Minute || d > time.Minute {
		t.Fatalf("Stat: time %v, want about now", info.ModTime)
	}
	if r, err := s.OpenStaged(t.Context(), st); err == nil {
		r.Close()
		t.Fatal("OpenStaged after Commit: the staged object is still there")
	}
	wantNoStaged(t, s)
}

// testEmpty: an empty upload is an object too.
func testEmpty(t *testing.T, s Storage) {
	st := stage(t, s, nil)
	if st.Size != 0 || st.SHA256 != shaHex(nil) {
		t.Fatalf("Stage empty: %+v", st)
	}
	if err := s.Commit(t.Context(), st, "blobs/e3/empty"); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantBytes(t, "empty", read(t, s, "blobs/e3/empty"), nil)
}

// testDedup: committing under a key that is there keeps the first object
// and drops the staged one.
func testDedup(t *testing.T, s Storage) {
	b := data(2, 100_000)
	commit(t, s, b, blobKey)
	commit(t, s, b, blobKey)
	wantBytes(t, "after two commits", read(t, s, blobKey), b)
	commit(t, s, data(3, 50), blobKey)
	wantBytes(t, "after a third commit", read(t, s, blobKey), b)
	wantNoStaged(t, s)
}

// testLimit: one byte more than the limit is refused and leaves nothing;
// exactly the limit is fine.
func testLimit(t *testing.T, s Storage) {
	b := data(4, 1000)
	_, err := s.Stage(t.Context(), bytes.NewReader(b), 999)
	if !fault.Is(err, fault.TooLarge) {
		t.Fatalf("Stage over the limit: %v, want fault.TooLarge", err)
	}
	if !strings.Contains(err.Error(), "larger than 999 bytes") {
		t.Fatalf("Stage over the limit: %q, want it to say larger than 999 bytes", err)
	}
	wantNoStaged(t, s)
	wantMissing(t, s, media.BlobKey(shaHex(b)))
	big := generator(5, 8<<20)
	if _, err := s.Stage(t.Context(), big, 1<<20); !fault.Is(err, fault.TooLarge) {
		t.Fatalf("Stage 8 MiB with a 1 MiB limit: %v, want fault.TooLarge", err)
	}
	wantNoStaged(t, s)
	st, err := s.Stage(t.Context(), bytes.NewReader(b), 1000)
	if err != nil || st.Size != 1000 {
		t.Fatalf("Stage at the limit: %+v, %v", st, err)
	}
	if err := s.Discard(t.Context(), st); err != nil {
		t.Fatal(err)
	}
}

// failAfter reads n bytes of src, then fails with err.
type failAfter struct {
	src io.Reader
	n   int64
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	k, err := f.src.Read(p)
	f.n -= int64(k)
	return k, err
}

// testReaderError: a read error midway (a cut-off upload) is returned as
// it is, and nothing is left.
func testReaderError(t *testing.T, s Storage) {
	boom := errors.New("boom")
	for _, want := range []error{boom, io.ErrUnexpectedEOF} {
		r := &failAfter{src: generator(6, 10<<20), n: 3<<20 + 5, err: want}
		if _, err := s.Stage(t.Context(), r, 0); !errors.Is(err, want) {
			t.Fatalf("Stage from a failing reader: %v, want %v", err, want)
		}
	}
	wantNoStaged(t, s)
}

// cancelAfter cancels its context once n bytes have been read.
type cancelAfter struct {
	src    io.Reader
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	k, err := c.src.Read(p)
	if c.n -= int64(k); c.n <= 0 {
		c.cancel()
	}
	return k, err
}

// testCancelled: a cancelled context stops a Stage, before or midway, and
// leaves nothing.
func testCancelled(t *testing.T, s Storage) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Stage(ctx, bytes.NewReader(data(7, 10)), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stage with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	r := &cancelAfter{src: generator(8, 16<<20), n: 2 << 20, cancel: cancel}
	if _, err := s.Stage(ctx, r, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stage cancelled midway: %v", err)
	}
	wantNoStaged(t, s)
}

// testDiscard: a discarded object is gone; discarding again is fine.
func testDiscard(t *testing.T, s Storage) {
	st := stage(t, s, data(9, 5000))
	for range 2 {
		if err := s.Discard(t.Context(), st); err != nil {
			t.Fatalf("Discard: %v", err)
		}
	}
	if r, err := s.OpenStaged(t.Context(), st); err == nil {
		r.Close()
		t.Fatal("OpenStaged after Discard succeeded")
	}
	if err := s.Commit(t.Context(), st, blobKey); err == nil {
		t.Fatal("Commit after Discard succeeded")
	}
	wantMissing(t, s, blobKey)
	wantNoStaged(t, s)
}

// testPut: Put replaces an object whole; a failed Put leaves the old one.
func testPut(t *testing.T, s Storage) {
	const key = "derived/ab/abcdef/w200-q80.webp"
	v1, v2 := data(10, 2<<20), data(11, 1234)
	put(t, s, key, v1)
	wantBytes(t, "v1", read(t, s, key), v1)
	put(t, s, key, v2)
	wantBytes(t, "v2", read(t, s, key), v2)
	boom := errors.New("boom")
	err := s.Put(t.Context(), key, &failAfter{src: generator(12, 4<<20), n: 1 << 20, err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("Put from a failing reader: %v, want boom", err)
	}
	wantBytes(t, "after a failed Put", read(t, s, key), v2)
	wantNoStaged(t, s)
}

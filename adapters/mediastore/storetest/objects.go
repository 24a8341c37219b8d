package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// testMissing: absent keys, and keys that are only a prefix of others,
// are fs.ErrNotExist.
func testMissing(t *testing.T, s Storage) {
	wantMissing(t, s, "blobs/00/nothing")
	commit(t, s, data(13, 10), "blobs/12/1234")
	wantMissing(t, s, "blobs/12")
	wantMissing(t, s, "blobs/12/1234/more")
}

// testSeek: reads from the middle and from the end, as HTTP Range does.
func testSeek(t *testing.T, s Storage) {
	b := data(14, 1<<20+99)
	commit(t, s, b, blobKey)
	r, info, err := s.Open(t.Context(), blobKey)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	if info.Size != int64(len(b)) {
		t.Fatalf("size %d, want %d", info.Size, len(b))
	}
	seekRead := func(off int64, whence, n int, want []byte) {
		t.Helper()
		if _, err := r.Seek(off, whence); err != nil {
			t.Fatalf("Seek(%d, %d): %v", off, whence, err)
		}
		got := make([]byte, n)
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("read after Seek(%d, %d): %v", off, whence, err)
		}
		wantBytes(t, "range", got, want)
	}
	seekRead(300_000, io.SeekStart, 1000, b[300_000:301_000])
	seekRead(500, io.SeekCurrent, 10, b[301_500:301_510])
	seekRead(-700, io.SeekEnd, 700, b[len(b)-700:])
	seekRead(0, io.SeekStart, 5, b[:5])
	if pos, err := r.Seek(0, io.SeekCurrent); err != nil || pos != 5 {
		t.Fatalf("Seek(0, current) = %d, %v; want 5", pos, err)
	}
}

// testDelete: deleting removes; deleting what is not there is fine.
func testDelete(t *testing.T, s Storage) {
	if err := s.Delete(t.Context(), blobKey); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
	commit(t, s, data(15, 100), blobKey)
	put(t, s, "derived/ab/abcdef/w10", data(16, 10))
	for range 2 {
		if err := s.Delete(t.Context(), blobKey); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	wantMissing(t, s, blobKey)
	wantBytes(t, "other key", read(t, s, "derived/ab/abcdef/w10"), data(16, 10))
	commit(t, s, data(15, 100), blobKey) // kept again after a delete
	wantBytes(t, "kept again", read(t, s, blobKey), data(15, 100))
}

// BadKeys are refused by every method that takes a key.
var BadKeys = []string{
	"", "../x", "/abs", "a//b", "A", "a/./b", "a/../b", "a/..", ".", "a/",
	"a\x00b", "a b", `a\b`, "é", "a:b", strings.Repeat("a", 600),
	"x/" + strings.Repeat("b", 256),
}

// testBadKeys: bad keys are fault.Invalid before storage is touched (a
// refused Commit leaves its staged object); long good keys are fine.
func testBadKeys(t *testing.T, s Storage) {
	ctx := t.Context()
	st := stage(t, s, data(17, 64))
	for _, k := range BadKeys {
		checks := map[string]error{"Commit": s.Commit(ctx, st, k), "Put": s.Put(ctx, k, strings.NewReader("x")), "Delete": s.Delete(ctx, k)}
		_, checks["Stat"] = s.Stat(ctx, k)
		r, _, err := s.Open(ctx, k)
		if err == nil {
			r.Close()
		}
		checks["Open"] = err
		for m, err := range checks {
			if !fault.Is(err, fault.Invalid) {
				t.Errorf("%s(%q): %v, want fault.Invalid", m, k, err)
			}
		}
	}
	wantBytes(t, "staged after refused commits", readStaged(t, s, st), data(17, 64))
	long := strings.Repeat(strings.Repeat("k", 99)+"/", 5) + "z0.-_"
	if len(long) > 512 {
		t.Fatalf("test key is %d bytes", len(long))
	}
	if err := s.Commit(ctx, st, long); err != nil {
		t.Fatalf("Commit under a %d-byte key: %v", len(long), err)
	}
	wantBytes(t, "long key", read(t, s, long), data(17, 64))
	wantNoStaged(t, s)
}

// testBadTokens: a staged object that Stage did not make is refused.
func testBadTokens(t *testing.T, s Storage) {
	ctx := t.Context()
	for _, tok := range []string{"", "../../etc/passwd", "/etc/passwd", "stage-../x", "objects"} {
		st := media.Staged{Token: tok}
		r, err := s.OpenStaged(ctx, st)
		if err == nil {
			r.Close()
			t.Errorf("OpenStaged(%q) succeeded", tok)
		}
		if err := s.Commit(ctx, st, blobKey); err == nil {
			t.Errorf("Commit(%q) succeeded", tok)
		}
		if err := s.Discard(ctx, st); !fault.Is(err, fault.Invalid) {
			t.Errorf("Discard(%q): %v, want fault.Invalid", tok, err)
		}
	}
	wantMissing(t, s, blobKey)
}

// testSweep: Sweep removes staged objects older than its age, not newer
// ones nor kept objects.
func testSweep(t *testing.T, s Storage) {
	old := stage(t, s, data(18, 100))
	commit(t, s, data(19, 100), blobKey)
	time.Sleep(1200 * time.Millisecond)
	fresh := stage(t, s, data(20, 100))
	n, err := s.Sweep(t.Context(), 600*time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("Sweep(600ms) = %d, %v; want 1 (the old staged object)", n, err)
	}
	if r, err := s.OpenStaged(t.Context(), old); err == nil {
		r.Close()
		t.Fatal("the old staged object survived Sweep")
	}
	wantBytes(t, "fresh staged", readStaged(t, s, fresh), data(20, 100))
	if n, err := s.Sweep(t.Context(), 0); err != nil || n != 1 {
		t.Fatalf("Sweep(0) = %d, %v; want 1", n, err)
	}
	wantBytes(t, "kept after sweeps", read(t, s, blobKey), data(19, 100))
}

// testConcurrentCommits: 8 uploads of the same bytes committed under one
// key at once all succeed, and the object is whole.
func testConcurrentCommits(t *testing.T, s Storage) {
	b := data(21, 1<<20+3)
	key := media.BlobKey(shaHex(b))
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			st, err := s.Stage(t.Context(), bytes.NewReader(b), 0)
			if err == nil {
				err = s.Commit(t.Context(), st, key)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent commits: %v", err)
	}
	wantBytes(t, "after concurrent commits", read(t, s, key), b)
	wantNoStaged(t, s)
}

// testLarge: a 64 MiB stream, never held in memory, round trips.
func testLarge(t *testing.T, s Storage) {
	const size = 64 << 20
	want := sha256.New()
	_, _ = io.Copy(want, generator(22, size))
	sum := hex.EncodeToString(want.Sum(nil))
	st, err := s.Stage(t.Context(), generator(22, size), size)
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	if st.Size != size || st.SHA256 != sum {
		t.Fatalf("Stage: %d bytes sha %s, want %d %s", st.Size, st.SHA256, size, sum)
	}
	key := media.BlobKey(sum)
	if err := s.Commit(t.Context(), st, key); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	r, info, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	got := sha256.New()
	n, err := io.Copy(got, r)
	if err != nil || n != size || info.Size != size {
		t.Fatalf("read back %d bytes (size %d), %v; want %d", n, info.Size, err, size)
	}
	if g := hex.EncodeToString(got.Sum(nil)); g != sum {
		t.Fatalf("read back sha %s, want %s", g, sum)
	}
	if _, err := s.Stat(t.Context(), key); errors.Is(err, fs.ErrNotExist) {
		t.Fatal("Stat: missing after Commit")
	}
}

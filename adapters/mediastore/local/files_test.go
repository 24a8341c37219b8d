package local_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/local"
)

// TestLayout: kept objects are files under root/objects with mode 0640 in
// directories of mode 0750, staged ones under root/tmp, nothing elsewhere.
func TestLayout(t *testing.T) {
	root := t.TempDir()
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	st, err := s.Stage(ctx, bytes.NewReader([]byte("hello")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tmp", st.Token)); err != nil {
		t.Fatalf("staged file: %v", err)
	}
	if err := s.Commit(ctx, st, "blobs/2c/2cf2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "derived/2c/2cf2/w1", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		want := fs.FileMode(0o640)
		if d.IsDir() {
			want = fs.ModeDir | 0o750
		} else {
			files = append(files, rel)
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", rel, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"objects/blobs/2c/2cf2", "objects/derived/2c/2cf2/w1"}
	if len(files) != len(want) || files[0] != want[0] || files[1] != want[1] {
		t.Fatalf("files %v, want %v", files, want)
	}
}

// TestInTheWay: a key whose path is a directory of other objects, or runs
// through a file, cannot be kept; the error is not "already there", and
// the staged upload stays for the caller to discard.
func TestInTheWay(t *testing.T) {
	s, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.Put(ctx, "a/b", bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a", "a/b/c"} {
		st, err := s.Stage(ctx, bytes.NewReader([]byte("y")), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, st, key); err == nil {
			t.Fatalf("Commit %s succeeded", key)
		}
		if err := s.Put(ctx, key, bytes.NewReader([]byte("z"))); err == nil {
			t.Fatalf("Put %s succeeded", key)
		}
		r, err := s.OpenStaged(ctx, st)
		if err != nil {
			t.Fatalf("staged upload after a refused Commit: %v", err)
		}
		r.Close()
	}
	if n, err := s.Sweep(ctx, 0); err != nil || n != 2 {
		t.Fatalf("Sweep(0) = %d, %v; want the 2 staged uploads (and no Put left)", n, err)
	}
}

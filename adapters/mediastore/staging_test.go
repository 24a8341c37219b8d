package mediastore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/halocms/halocms/adapters/mediastore"
)

// TestStageReaders: readers that return a byte at a time, half of what
// is asked, or data together with io.EOF all stage exactly; a reader's
// own error (here a timeout after one read) is returned as it is.
func TestStageReaders(t *testing.T) {
	s, err := mediastore.NewStaging(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB, several buffers
	readers := map[string]func() io.Reader{
		"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"dataEOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
		"oneByte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(b[:70_000])) },
	}
	for name, r := range readers {
		want := b
		if name == "oneByte" {
			want = b[:70_000]
		}
		st, err := s.Stage(t.Context(), r(), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantSum := sha256.Sum256(want)
		if st.Size != int64(len(want)) || st.SHA256 != hex.EncodeToString(wantSum[:]) {
			t.Fatalf("%s: %+v, want %d bytes", name, st, len(want))
		}
		f, err := s.Open(st)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: staged bytes differ", name)
		}
	}
	_, err = s.Stage(t.Context(), iotest.TimeoutReader(bytes.NewReader(b)), 0)
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("timeout reader: %v, want iotest.ErrTimeout", err)
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != len(readers) {
		t.Fatalf("%d files staged, want %d", len(entries), len(readers))
	}
}

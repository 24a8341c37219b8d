package s3test_test

import (
	"bytes"
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/s3"
	"github.com/halocms/halocms/adapters/mediastore/s3/s3test"
)

// TestServerBuilds builds (or finds) versitygw, starts it and stores an
// object in it; `make s3-testserver` runs it before the other tests.
func TestServerBuilds(t *testing.T) {
	cfg := s3test.Start(t)
	s, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(t.Context(), "a/b", bytes.NewReader([]byte("hello"))); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(t.Context(), "a/b")
	if err != nil || info.Size != 5 {
		t.Fatalf("Stat: %+v, %v", info, err)
	}
}

package s3_test

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/s3"
	"github.com/halocms/halocms/adapters/mediastore/s3/s3test"
	"github.com/halocms/halocms/domain/fault"
)

// TestConfig: a prefix keeps objects under it; a second New on the same
// bucket finds it; bad prefixes and bad credentials are refused.
func TestConfig(t *testing.T) {
	srv := s3test.StartServer(t)
	cfg := srv.Config(t)
	cfg.Prefix = "/media/cms/"
	withPrefix, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := withPrefix.Put(t.Context(), "derived/ab/x", bytes.NewReader([]byte("hi"))); err != nil {
		t.Fatal(err)
	}
	cfg.Prefix = ""
	plain, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New on an existing bucket: %v", err)
	}
	if info, err := plain.Stat(t.Context(), "media/cms/derived/ab/x"); err != nil || info.Size != 2 {
		t.Fatalf("the object under its prefix: %+v, %v", info, err)
	}
	if _, err := plain.Stat(t.Context(), "derived/ab/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the object without its prefix: %v, want fs.ErrNotExist", err)
	}
	cfg.Prefix = "../up"
	if _, err := s3.New(t.Context(), cfg); !fault.Is(err, fault.Invalid) {
		t.Fatalf("New with prefix ../up: %v, want fault.Invalid", err)
	}
	cfg.Prefix, cfg.SecretKey = "", "wrong"
	if _, err := s3.New(t.Context(), cfg); err == nil {
		t.Fatal("New with a wrong secret key succeeded")
	}
}

package s3_test

import (
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/halocms/halocms/adapters/mediastore/s3"
	"github.com/halocms/halocms/adapters/mediastore/s3/s3test"
)

// TestSweepAbortsIncompleteUploads: a multipart upload left by a crash is
// aborted by Sweep once old enough, and only under the store's prefix.
func TestSweepAbortsIncompleteUploads(t *testing.T) {
	cfg := s3test.Start(t)
	cfg.Prefix = "media"
	s, err := s3.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Region: cfg.Region,
	})
	if err != nil {
		t.Fatal(err)
	}
	core := minio.Core{Client: client}
	for _, name := range []string{"media/blobs/ab/abcd", "other/x"} {
		if _, err := core.NewMultipartUpload(t.Context(), cfg.Bucket, name, minio.PutObjectOptions{}); err != nil {
			t.Fatalf("NewMultipartUpload %s: %v", name, err)
		}
	}
	if n, err := s.Sweep(t.Context(), time.Hour); err != nil || n != 0 {
		t.Fatalf("Sweep(1h) = %d, %v; want 0 (the upload is new)", n, err)
	}
	time.Sleep(1100 * time.Millisecond) // the service keeps whole seconds
	if n, err := s.Sweep(t.Context(), 0); err != nil || n != 1 {
		t.Fatalf("Sweep(0) = %d, %v; want 1", n, err)
	}
	var left []string
	for u := range client.ListIncompleteUploads(t.Context(), cfg.Bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		left = append(left, u.Key)
	}
	if len(left) != 1 || left[0] != "other/x" {
		t.Fatalf("incomplete uploads left: %v, want [other/x]", left)
	}
}

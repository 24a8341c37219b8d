// Package s3 keeps media objects in a bucket of an S3-compatible service
// (AWS S3, Ceph, Garage, versitygw, ...). Uploads are staged, hashed and
// bounded in a local directory, then sent with their size known, so the
// client can choose between one PUT and a multipart upload and retry a
// part; a staged upload never sits whole in memory.
//
// It talks S3 through github.com/minio/minio-go/v7: Apache-2.0, one small
// client with no cloud SDK behind it, signature V4, multipart uploads of
// seekable files, and GetObject's *minio.Object, an io.ReadSeekCloser that
// turns seeks into ranged GETs (what HTTP Range needs).
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/halocms/halocms/adapters/mediastore"
	"github.com/halocms/halocms/domain/media"
)

// Config says where the bucket is. The lead exposes it as CMS_MEDIA_S3_*.
type Config struct {
	Endpoint  string // host[:port], no scheme
	Bucket    string
	Region    string // empty: the client's default (us-east-1)
	AccessKey string
	SecretKey string
	UseSSL    bool
	// Prefix is put before every key ("media/" keeps objects under
	// media/blobs/... and media/derived/...); it follows the key rules.
	Prefix string
	// StagingDir is the local directory of staged uploads (default: a
	// halocms-media-staging directory in the system's temporary directory).
	StagingDir string
}

// Store is the S3 driver of the media storage port.
type Store struct {
	client  *minio.Client
	bucket  string
	prefix  string
	staging *mediastore.Staging
}

// New connects to the service and creates the bucket when it is missing.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("s3 media store: endpoint and bucket must be set")
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := mediastore.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("s3 media store: prefix: %w", err)
		}
		prefix += "/"
	}
	dir := cfg.StagingDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "halocms-media-staging")
	}
	staging, err := mediastore.NewStaging(dir)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 media store: %w", err)
	}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3 media store: bucket %s: %w", cfg.Bucket, err)
	}
	if !ok {
		err = client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if err != nil && !alreadyOwned(err) {
			return nil, fmt.Errorf("s3 media store: create bucket %s: %w", cfg.Bucket, err)
		}
	}
	return &Store{client: client, bucket: cfg.Bucket, prefix: prefix, staging: staging}, nil
}

// Stage streams r into the local staging directory while hashing it.
func (s *Store) Stage(ctx context.Context, r io.Reader, limit int64) (media.Staged, error) {
	return s.staging.Stage(ctx, r, limit)
}

// OpenStaged re-reads a staged upload from its start.
func (s *Store) OpenStaged(_ context.Context, st media.Staged) (io.ReadSeekCloser, error) {
	f, err := s.staging.Open(st)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Discard drops a staged upload (idempotent).
func (s *Store) Discard(_ context.Context, st media.Staged) error {
	return s.staging.Discard(st)
}

// Commit uploads a staged object under key unless key is there already,
// then drops the staged file. An S3 PUT is atomic: readers see the whole
// object or none. Two commits of one key at once may both upload; for a
// content-addressed key they upload the same bytes.
func (s *Store) Commit(ctx context.Context, st media.Staged, key string) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	f, err := s.staging.Open(st)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = s.Stat(ctx, key)
	switch {
	case err == nil: // kept already: identical bytes are stored once
	case errors.Is(err, fs.ErrNotExist):
		if err := s.upload(ctx, key, f); err != nil {
			return err
		}
	default:
		return err
	}
	return s.staging.Discard(st)
}

// Put uploads r under key, replacing what was there. r is spooled to the
// staging directory first so that its size is known.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	tmp, _, err := s.staging.Temp(ctx, r)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.upload(ctx, key, f)
}

func (s *Store) upload(ctx context.Context, key string, f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, s.bucket, s.prefix+key, f, info.Size(),
		minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("s3 media store: put %s: %w", key, err)
	}
	return nil
}

// Open reads a kept object. The first request is sent before Open
// returns (a missing key is reported here); each Seek then reads from its
// offset with a ranged GET.
func (s *Store) Open(ctx context.Context, key string) (io.ReadSeekCloser, media.ObjectInfo, error) {
	if err := mediastore.CheckKey(key); err != nil {
		return nil, media.ObjectInfo{}, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, media.ObjectInfo{}, s.mapErr(key, err)
	}
	info, err := obj.Stat()
	if err != nil {
		_ = obj.Close()
		return nil, media.ObjectInfo{}, s.mapErr(key, err)
	}
	return obj, media.ObjectInfo{Size: info.Size, ModTime: info.LastModified}, nil
}

// Stat tells a kept object's size and time.
func (s *Store) Stat(ctx context.Context, key string) (media.ObjectInfo, error) {
	if err := mediastore.CheckKey(key); err != nil {
		return media.ObjectInfo{}, err
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return media.ObjectInfo{}, s.mapErr(key, err)
	}
	return media.ObjectInfo{Size: info.Size, ModTime: info.LastModified}, nil
}

// Delete removes key; S3 reports no error for a missing key.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err != nil {
		if errors.Is(s.mapErr(key, err), fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("s3 media store: delete %s: %w", key, err)
	}
	return nil
}

// Sweep removes local staged uploads older than age, and the bucket's
// multipart uploads under the prefix started before that and never
// completed (a Commit or Put cut short by a crash; one that fails is
// aborted by the client already). It returns how many of both it removed.
// With no prefix, that is every incomplete upload of the bucket.
func (s *Store) Sweep(ctx context.Context, age time.Duration) (int, error) {
	n, err := s.staging.Sweep(ctx, age)
	if err != nil {
		return n, err
	}
	m, err := s.abortStale(ctx, time.Now().Add(-age))
	return n + m, err
}

func (s *Store) abortStale(ctx context.Context, cutoff time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when this returns early
	core := minio.Core{Client: s.client}
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			return n, fmt.Errorf("s3 media store: list incomplete uploads: %w", u.Err)
		}
		if u.Initiated.After(cutoff) {
			continue
		}
		err := core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID)
		if err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
			return n, fmt.Errorf("s3 media store: abort upload of %s: %w", u.Key, err)
		}
		if err == nil {
			n++
		}
	}
	return n, ctx.Err()
}

// mapErr turns the service's "no such key" into an error wrapping
// fs.ErrNotExist.
func (s *Store) mapErr(key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket" {
		return fmt.Errorf("media object %s: %w", key, fs.ErrNotExist)
	}
	return fmt.Errorf("s3 media store: %s: %w", key, err)
}

func alreadyOwned(err error) bool {
	code := minio.ToErrorResponse(err).Code
	return code == "BucketAlreadyOwnedByYou"
}

package mediastore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// Modes of what the drivers write: objects readable by the server's group.
const (
	FileMode fs.FileMode = 0o640
	DirMode  fs.FileMode = 0o750
)

// Name prefixes of the staging area's files: a staged upload, and the
// temporary file of a Put. Sweep removes both once old enough.
const (
	stagePrefix = "stage-"
	putPrefix   = "put-"
)

// Staging is a directory of temporary files: uploads streamed and hashed
// before they are kept (local: on the same filesystem as the objects, so
// that keeping one is a link; s3: a local spool uploaded with its size).
type Staging struct {
	dir string
}

// NewStaging uses dir (created if missing) as the staging area.
func NewStaging(dir string) (*Staging, error) {
	if dir == "" {
		return nil, errors.New("mediastore: staging directory not set")
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("mediastore: staging directory: %w", err)
	}
	return &Staging{dir: dir}, nil
}

// Dir is the staging directory.
func (s *Staging) Dir() string { return s.dir }

// Stage streams r into a new staged file while hashing it; see the
// storage port's Stage. The file is synced before Stage returns.
func (s *Staging) Stage(ctx context.Context, r io.Reader, limit int64) (media.Staged, error) {
	path, sum, n, err := s.write(ctx, stagePrefix, r, limit)
	if err != nil {
		return media.Staged{}, err
	}
	return media.Staged{Token: filepath.Base(path), SHA256: sum, Size: n}, nil
}

// Temp streams r into a new temporary file (for a Put) and returns its
// path and size; the caller renames, uploads or removes it.
func (s *Staging) Temp(ctx context.Context, r io.Reader) (path string, size int64, err error) {
	path, _, size, err = s.write(ctx, putPrefix, r, 0)
	return path, size, err
}

// Path is the file of a staged object, after checking that its token is
// one that Stage makes (a token never names a file outside the area).
func (s *Staging) Path(st media.Staged) (string, error) {
	t := st.Token
	if !strings.HasPrefix(t, stagePrefix) || strings.Contains(t, "/") || CheckKey(t) != nil {
		return "", fault.Invalidf("not a staged object: %q", t)
	}
	return filepath.Join(s.dir, t), nil
}

// Open re-reads a staged object from its start.
func (s *Staging) Open(st media.Staged) (*os.File, error) {
	p, err := s.Path(st)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// Discard removes a staged object; a missing one is not an error.
func (s *Staging) Discard(st media.Staged) error {
	p, err := s.Path(st)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sweep removes the staging area's files last written at least age ago
// (abandoned uploads, a Put cut short by a crash) and returns how many.
func (s *Staging) Sweep(ctx context.Context, age time.Duration) (int, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-age)
	n := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		name := e.Name()
		if !strings.HasPrefix(name, stagePrefix) && !strings.HasPrefix(name, putPrefix) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // committed or discarded meanwhile
		}
		if err != nil {
			return n, err
		}
		if info.ModTime().After(cutoff) {
			continue
		}
		err = os.Remove(filepath.Join(s.dir, name))
		if err == nil {
			n++
		} else if !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
	}
	return n, nil
}

// write copies r (at most limit bytes when limit > 0) into a new synced
// file named prefix*, hashing it on the way. On any failure the file is
// removed.
func (s *Staging) write(ctx context.Context, prefix string, r io.Reader, limit int64) (path, sum string, n int64, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", 0, err
	}
	f, err := os.CreateTemp(s.dir, prefix+"*")
	if err != nil {
		return "", "", 0, fmt.Errorf("mediastore: staging: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(FileMode); err != nil {
		return "", "", 0, err
	}
	src := io.Reader(ctxReader{ctx: ctx, r: r})
	if limit > 0 {
		src = io.LimitReader(src, limit+1)
	}
	h := sha256.New()
	n, err = copyHashed(newWriteback(f), h, src)
	if err != nil {
		return "", "", 0, err
	}
	if limit > 0 && n > limit {
		err = fault.New(fault.TooLarge, "larger than %d bytes", limit)
		return "", "", 0, err
	}
	if err = f.Sync(); err != nil {
		return "", "", 0, err
	}
	if err = f.Close(); err != nil {
		return "", "", 0, err
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), n, nil
}

// ctxReader fails its reads once ctx is done, so a cancelled request stops
// a copy between two reads.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

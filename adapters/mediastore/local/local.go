// Package local keeps media objects as files under one root directory
// (by default CMS_DATA_DIR/media): uploads are staged in root/tmp and kept
// objects live in root/objects/<key>, on the same filesystem, so that
// keeping a staged upload is a hard link (which never replaces an object
// already there: the same bytes are stored once) and replacing a derived
// image is a rename. Files are synced before they are linked or renamed,
// and their directory after, so a crash leaves an object whole or absent.
//
// It needs only the standard library; the root's filesystem must support
// hard links (ext4, xfs, btrfs, zfs and tmpfs do).
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/halocms/halocms/adapters/mediastore"
	"github.com/halocms/halocms/domain/media"
)

// Store is the local driver of the media storage port.
type Store struct {
	objects string
	staging *mediastore.Staging
}

// New opens (creating them if missing) the store's directories under root.
func New(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("local media store: root not set")
	}
	objects := filepath.Join(root, "objects")
	if err := os.MkdirAll(objects, mediastore.DirMode); err != nil {
		return nil, fmt.Errorf("local media store: %w", err)
	}
	st, err := mediastore.NewStaging(filepath.Join(root, "tmp"))
	if err != nil {
		return nil, err
	}
	return &Store{objects: objects, staging: st}, nil
}

// Stage streams r into root/tmp while hashing it; see the port.
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

// Commit keeps a staged upload under key by linking it into place; when
// key is already there the staged upload is dropped and key kept.
func (s *Store) Commit(ctx context.Context, st media.Staged, key string) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	src, err := s.staging.Path(st)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dst := filepath.Join(s.objects, filepath.FromSlash(key))
	if err := s.mkdirs(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("local media store: commit %s: %w", key, err)
	}
	if err := os.Link(src, dst); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("local media store: commit %s: %w", key, err)
		}
		if info, serr := os.Lstat(dst); serr != nil || !info.Mode().IsRegular() {
			return fmt.Errorf("local media store: commit %s: something else is in the way", key)
		}
	}
	if err := os.Remove(src); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local media store: commit %s: %w", key, err)
	}
	return syncDir(filepath.Dir(dst))
}

// Put writes r under key, replacing what was there in one rename.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	tmp, _, err := s.staging.Temp(ctx, r)
	if err != nil {
		return err
	}
	dst := filepath.Join(s.objects, filepath.FromSlash(key))
	if err := s.mkdirs(filepath.Dir(dst)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("local media store: put %s: %w", key, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("local media store: put %s: %w", key, err)
	}
	return syncDir(filepath.Dir(dst))
}

// Open reads a kept object. The file is its own io.ReadSeekCloser, and
// keeps its bytes even if the object is replaced or deleted meanwhile.
func (s *Store) Open(_ context.Context, key string) (io.ReadSeekCloser, media.ObjectInfo, error) {
	if err := mediastore.CheckKey(key); err != nil {
		return nil, media.ObjectInfo{}, err
	}
	f, err := os.Open(filepath.Join(s.objects, filepath.FromSlash(key)))
	if err != nil {
		return nil, media.ObjectInfo{}, mapErr(key, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		_ = f.Close()
		return nil, media.ObjectInfo{}, mapErr(key, err)
	}
	return f, media.ObjectInfo{Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Stat tells a kept object's size and time.
func (s *Store) Stat(_ context.Context, key string) (media.ObjectInfo, error) {
	if err := mediastore.CheckKey(key); err != nil {
		return media.ObjectInfo{}, err
	}
	info, err := os.Stat(filepath.Join(s.objects, filepath.FromSlash(key)))
	if err == nil && !info.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return media.ObjectInfo{}, mapErr(key, err)
	}
	return media.ObjectInfo{Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Delete removes key; a missing key is not an error. Directories left
// empty stay (a later object of the same prefix reuses them).
func (s *Store) Delete(_ context.Context, key string) error {
	if err := mediastore.CheckKey(key); err != nil {
		return err
	}
	p := filepath.Join(s.objects, filepath.FromSlash(key))
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() {
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("local media store: delete %s: %w", key, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local media store: delete %s: %w", key, err)
	}
	return nil
}

// Sweep removes staged uploads (and interrupted Puts) older than age.
func (s *Store) Sweep(ctx context.Context, age time.Duration) (int, error) {
	return s.staging.Sweep(ctx, age)
}

// mkdirs creates dir and its missing parents below the objects directory,
// syncing each new directory's parent so the new entry is durable.
func (s *Store) mkdirs(dir string) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if dir == s.objects || parent == dir {
		return fmt.Errorf("objects directory %s is missing", s.objects)
	}
	if err := s.mkdirs(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, mediastore.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// mapErr turns "no such object" (missing, or a directory or a file in the
// way of its path) into an error wrapping fs.ErrNotExist.
func mapErr(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("media object %s: %w", key, fs.ErrNotExist)
	}
	return fmt.Errorf("local media store: %s: %w", key, err)
}

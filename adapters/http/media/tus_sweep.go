package media

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sweep removes the uploads nobody wrote to for maxAge (abandoned: tusd's
// file store keeps them forever) and the stray files of uploads whose
// creation failed half-way. It returns how many uploads it removed. An
// upload being written to has a fresh modification time and is left
// alone; run it every hour or so with a maxAge of a day.
func (u *Uploads) Sweep(ctx context.Context, maxAge time.Duration) (int, error) {
	entries, err := os.ReadDir(u.store.Path)
	if err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-maxAge)
	removed := 0
	var errs []error
	for _, e := range entries {
		if ctx.Err() != nil {
			return removed, ctx.Err()
		}
		id, isInfo := strings.CutSuffix(e.Name(), ".info")
		if !validUploadID(id) || !e.Type().IsRegular() {
			continue
		}
		if !isInfo {
			// The bytes: a stray only when no .info names them.
			if _, err := os.Stat(u.infoPath(id)); errors.Is(err, fs.ErrNotExist) && u.idle(id, cutoff) {
				if err := os.Remove(u.binPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
			continue
		}
		if !u.idle(id, cutoff) {
			continue
		}
		ok, err := u.sweepOne(ctx, id, cutoff)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// sweepOne removes an idle upload under its lock, if it is still idle. A
// request holding the lock is asked to let go (tusd's lock protocol): one
// that sent nothing for maxAge is stuck anyway.
func (u *Uploads) sweepOne(ctx context.Context, id string, cutoff time.Time) (bool, error) {
	lock, err := u.locker.NewLock(id)
	if err != nil {
		return false, err
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := lock.Lock(lctx, func() {}); err != nil {
		return false, nil // still held: next time
	}
	defer lock.Unlock()
	if !u.idle(id, cutoff) {
		return false, nil
	}
	if err := u.remove(ctx, id); err != nil {
		return false, err
	}
	return true, nil
}

// idle tells whether neither of an upload's files changed since cutoff
// (a file that is not there does not count).
func (u *Uploads) idle(id string, cutoff time.Time) bool {
	for _, p := range []string{u.infoPath(id), u.binPath(id)} {
		st, err := os.Stat(p)
		if err == nil && st.ModTime().After(cutoff) {
			return false
		}
	}
	return true
}

func (u *Uploads) infoPath(id string) string { return filepath.Join(u.store.Path, id+".info") }

func (u *Uploads) binPath(id string) string { return filepath.Join(u.store.Path, id) }

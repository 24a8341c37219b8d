package postgres

// Where the private cluster lives: the lock on the data directory, the
// cluster directory or its fallback, and files owned by the server's OS
// user.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// as ctx allows.
func lockDir(ctx context.Context, dir string) (func(), error) {
	path := filepath.Join(dir, "pg.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("private PostgreSQL: lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("private PostgreSQL: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("private PostgreSQL: waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func fallbackDir(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(fallbackRoot, hex.EncodeToString(h[:])[:16])
}

// existingClusterDir returns the cluster directory for dataDir if a cluster
// was created there (or in its fallback location), else "".
func existingClusterDir(abs string) string {
	for _, root := range []string{filepath.Join(abs, "pg"), fallbackDir(abs)} {
		if _, err := os.Stat(filepath.Join(root, "data", "PG_VERSION")); err == nil {
			return root
		}
	}
	return ""
}

// chooseDir picks where a new cluster goes: <abs>/pg, unless the server's OS
// user cannot reach it (root running from a checkout the user cannot
// traverse), then the fallback directory.
func (c *cluster) chooseDir(ctx context.Context, abs string, log *slog.Logger) error {
	primary := filepath.Join(abs, "pg")
	if err := c.mkdirOwned(primary); err != nil {
		return err
	}
	if c.owner == nil {
		c.root, c.data = primary, filepath.Join(primary, "data")
		return nil
	}
	if out, err := c.run(ctx, "test", "-w", primary); err == nil {
		c.root, c.data = primary, filepath.Join(primary, "data")
		return nil
	} else if ctx.Err() != nil {
		return fmt.Errorf("private PostgreSQL: %w: %s", err, out)
	}
	fb := fallbackDir(abs)
	log.Warn("postgres: the server's OS user cannot reach the data directory; putting the cluster elsewhere",
		"user", c.owner.Username, "unreachable", primary, "cluster", fb)
	_ = os.Remove(primary) // only if still empty
	if err := os.MkdirAll(fallbackRoot, 0o755); err != nil {
		return fmt.Errorf("private PostgreSQL: %s (as %s) cannot reach %s, and %w",
			c.owner.Username, c.owner.Username, primary, err)
	}
	_ = os.Chmod(fallbackRoot, 0o755)
	if err := c.mkdirOwned(fb); err != nil {
		return err
	}
	if out, err := c.run(ctx, "test", "-w", fb); err != nil {
		return fmt.Errorf("private PostgreSQL: OS user %s can reach neither %s nor %s (make their parent directories traversable, e.g. chmod o+x, or set DATABASE_URL): %v: %s",
			c.owner.Username, primary, fb, err, out)
	}
	note := fmt.Sprintf("The private PostgreSQL cluster for this directory lives in\n%s\nbecause OS user %s cannot reach %s.\n",
		fb, c.owner.Username, primary)
	_ = os.WriteFile(filepath.Join(abs, "pg.location"), []byte(note), 0o644)
	c.root, c.data = fb, filepath.Join(fb, "data")
	return nil
}

// mkdirOwned creates dir (mode 0700) and gives it to the server's OS user.
func (c *cluster) mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	if c.owner != nil {
		if err := os.Chown(dir, c.uid, c.gid); err != nil {
			return fmt.Errorf("private PostgreSQL: %w", err)
		}
	}
	return nil
}

// writeOwned writes a file and gives it to the server's OS user.
func (c *cluster) writeOwned(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if c.owner != nil {
		if err := os.Chown(tmp, c.uid, c.gid); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return os.Rename(tmp, path)
}

// Package s3test runs a real S3-compatible server for tests: versitygw
// (github.com/versity/versitygw, Apache-2.0), an S3 gateway in Go that
// checks V4 signatures, does multipart uploads and ranged GETs, and keeps
// objects as files of a directory (its posix backend), so a test's
// server needs nothing but a temporary directory.
//
// versitygw is built from the nested module ../testserver (its own go.mod
// and go.sum, so its many dependencies never enter halocms's go.mod), once
// per version of that module: the binary is cached under
// os.UserCacheDir()/halocms/, keyed by a hash of the module's go.mod and
// go.sum and of the Go version. `make s3-testserver` builds it ahead of
// the tests.
package s3test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// serverPackage is the main package of versitygw, pinned by ../testserver.
const serverPackage = "github.com/versity/versitygw/cmd/versitygw"

// moduleDir is the nested module that pins versitygw, found next to this
// source file (tests run from the source tree).
func moduleDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("s3test: cannot find its own source file")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "testserver")
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err != nil {
		return "", fmt.Errorf("s3test: the versitygw module: %w", err)
	}
	return dir, nil
}

// Binary is the path of the versitygw binary, built first if it is not
// in the cache (a few minutes the first time, while the Go module and
// build caches are cold). Builds by several processes at once wait for
// one another.
func Binary() (string, error) {
	mod, err := moduleDir()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(mod, name))
		if err != nil {
			return "", fmt.Errorf("s3test: %w", err)
		}
		h.Write(b)
	}
	h.Write([]byte(runtime.Version() + runtime.GOOS + runtime.GOARCH))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir() // no HOME: still built once per machine boot
	}
	dir := filepath.Join(cache, "halocms", "versitygw-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "versitygw")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	unlock, err := lock(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built by another process while this one waited
	}
	tmp := bin + ".tmp"
	// go test puts its own GOROOT/bin first on PATH: the same go builds it.
	cmd := exec.Command("go", "build", "-o", tmp, serverPackage)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0",
		strings.TrimSpace("GOFLAGS=-mod=readonly "+os.Getenv("GOFLAGS")))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("s3test: building versitygw in %s failed (%v):\n%s", mod, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("s3test: %w", err)
	}
	return bin, nil
}

// lock takes an exclusive lock on path, waiting for it.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("s3test: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("s3test: lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

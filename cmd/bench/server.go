package main

// The real server binary as the content, push and loyalty phases run it:
// built from the module, started on a free local port against a database
// of its own, stopped, and watched (its log and its CPU time).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// serverReadyTimeout bounds the server's start-up (until /readyz answers
// 200); serverStopTimeout its shutdown after SIGTERM.
const (
	serverReadyTimeout = 60 * time.Second
	serverStopTimeout  = 10 * time.Second
)

// launchServer builds cms and serves the database at dbURL with it, its
// first admin "admin" with the returned password; env adds settings. Its
// progress lines start with phase.
func launchServer(ctx context.Context, phase, dir, dbURL string, env ...string) (*cmsServer, string, error) {
	bin, err := buildServer(ctx, phase, dir)
	if err != nil {
		return nil, "", err
	}
	password, err := randomHex(10)
	if err != nil {
		return nil, "", err
	}
	srv, err := startServer(ctx, phase, bin, dir, append([]string{
		"DATABASE_URL=" + dbURL,
		"CMS_ADMIN_USERNAME=admin",
		"CMS_ADMIN_PASSWORD=" + password,
		"CMS_BCRYPT_COST=4",
		"CMS_LOG_LEVEL=warn",
	}, env...))
	return srv, password, err
}

// buildServer builds ./cmd/cms of the module the bench runs in.
func buildServer(ctx context.Context, phase, dir string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "cms")); err != nil {
		return "", fmt.Errorf("no cmd/cms in %s: %w", root, err)
	}
	bin := filepath.Join(dir, "cms")
	progressf("%s: go build -o %s ./cmd/cms (in %s)", phase, bin, root)
	t0 := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cms")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cms: %w\n%s", err, out)
	}
	progressf("%s: built in %s", phase, time.Since(t0).Round(100*time.Millisecond))
	return bin, nil
}

// databaseURL is serverURL with its database replaced by name.
func databaseURL(serverURL, name string) string {
	if strings.HasPrefix(serverURL, "postgres://") || strings.HasPrefix(serverURL, "postgresql://") {
		if u, err := url.Parse(serverURL); err == nil {
			u.Path, u.RawPath = "/"+name, ""
			return u.String()
		}
	}
	return serverURL + " dbname=" + name // keyword/value form: the last setting wins
}

type cmsServer struct {
	phase   string // of the bench, for progress lines
	bin     string // the binary and the settings it was started with (see restart)
	dir     string
	env     []string
	cmd     *exec.Cmd
	base    string
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error
	once    sync.Once
}

// startServer starts `bin serve` on a free local port and waits until it
// is ready.
func startServer(ctx context.Context, phase, bin, dir string, env []string) (*cmsServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logPath := filepath.Join(dir, "cms.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CMS_HTTP_ADDR="+addr, "CMS_DATA_DIR="+filepath.Join(dir, "data"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	s := &cmsServer{phase: phase, bin: bin, dir: dir, env: env, cmd: cmd, base: "http://" + addr, logPath: logPath, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	progressf("%s: started the server (pid %d) on %s; waiting for /readyz", phase, cmd.Process.Pid, addr)
	t0 := time.Now()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.NewTimer(serverReadyTimeout)
	defer deadline.Stop()
	for {
		resp, err := hc.Get(s.base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				progressf("%s: server ready after %s", phase, time.Since(t0).Round(10*time.Millisecond))
				return s, nil
			}
		}
		select {
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-s.done:
			err := fmt.Errorf("the server exited before it was ready: %v\nserver log (last lines):\n%s", s.waitErr, s.logTail(40))
			return nil, err
		case <-deadline.C:
			s.stop()
			return nil, fmt.Errorf("the server was not ready after %s\nserver log (last lines):\n%s", serverReadyTimeout, s.logTail(40))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, then SIGKILL after serverStopTimeout, and waits for
// the process to end.
func (s *cmsServer) stop() {
	s.once.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(serverStopTimeout)
		defer t.Stop()
		select {
		case <-s.done:
			progressf("%s: server stopped", s.phase)
		case <-t.C:
			progressf("%s: server still running %s after SIGTERM: SIGKILL", s.phase, serverStopTimeout)
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// restart stops the server and starts it again on the same database and
// directory with the settings it had plus env (which win: the last value
// of a variable is the one used). The new server listens on another port.
func (s *cmsServer) restart(ctx context.Context, env ...string) (*cmsServer, error) {
	s.stop()
	return startServer(ctx, s.phase, s.bin, s.dir, append(slices.Clip(s.env), env...))
}

// waitIdle waits, at most max, until the server uses less than a tenth
// of a core over a second: a server just started does work of its own for
// a while (a projection's first pass over the items, for one), which
// must not count against what is measured next.
func (s *cmsServer) waitIdle(ctx context.Context, max time.Duration) {
	t0 := time.Now()
	last := s.cpuSeconds()
	for time.Since(t0) < max {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		now := s.cpuSeconds()
		if now-last < 0.1 {
			progressf("%s: server idle after %s", s.phase, time.Since(t0).Round(time.Second))
			return
		}
		last = now
	}
	progressf("%s: server still busy after %s", s.phase, max)
}

// logTail returns the last n lines of the server's output.
func (s *cmsServer) logTail(n int) string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// cpuSeconds is the user+system CPU time the server process has used
// (Linux /proc; 0 elsewhere).
func (s *cmsServer) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

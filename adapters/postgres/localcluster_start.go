package postgres

// Starting the private cluster: its layout in memory, the start under the
// directory lock, its port, and the wait until it answers.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

type cluster struct {
	root   string     // cluster directory: data/, port, server.log, socket
	data   string     // PGDATA
	owner  *user.User // OS user the server runs as; nil: this process's user
	uid    int
	gid    int
	bindir string
	major  string // major version of the binaries in bindir
}

func privateURL(port int) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", superuser, port)
}

// startPrivate returns the URL of the private cluster under dataDir, setting
// it up and starting it if needed (never probing for another server).
func startPrivate(ctx context.Context, dataDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("private PostgreSQL: %w", err)
	}
	unlock, err := lockDir(ctx, abs)
	if err != nil {
		return "", err
	}
	defer unlock()

	c := &cluster{}
	if root := existingClusterDir(abs); root != "" {
		c.root = root
		c.data = filepath.Join(root, "data")
		if err := c.setOwner(true); err != nil {
			return "", err
		}
	} else {
		if err := c.setOwner(true); err != nil {
			return "", err
		}
		if err := c.chooseDir(ctx, abs, log); err != nil {
			return "", err
		}
	}
	if err := c.findBinaries(); err != nil {
		return "", err
	}

	if _, err := os.Stat(filepath.Join(c.data, "PG_VERSION")); err != nil {
		if err := c.initdb(ctx, log); err != nil {
			return "", err
		}
	}

	// Already running (another process started it, or an earlier run)?
	if running, _ := c.running(ctx); running {
		port := c.pidFilePort()
		if port == 0 {
			port = c.readPort()
		}
		if port != 0 {
			if err := waitReady(ctx, privateURL(port), 30*time.Second); err == nil {
				log.Debug("postgres: private cluster already running", "dir", c.root, "port", port)
				return privateURL(port), nil
			}
		}
		// Running but not answering where we expect: restart it.
		log.Warn("postgres: private cluster runs but does not answer; restarting", "dir", c.root)
		if out, err := c.run(ctx, "pg_ctl", "stop", "-D", c.data, "-m", "fast", "-w", "-t", "60"); err != nil {
			return "", fmt.Errorf("private PostgreSQL in %s runs but does not answer, and stopping it failed: %w: %s", c.root, err, out)
		}
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := c.readPort()
		if port == 0 || !portFree(port) {
			if port, err = freePort(); err != nil {
				return "", err
			}
		}
		if err := c.writeConfig(port); err != nil {
			return "", err
		}
		log.Info("postgres: starting private cluster", "dir", c.root, "port", port, "bindir", c.bindir)
		out, err := c.run(ctx, "pg_ctl", "start", "-D", c.data, "-l", filepath.Join(c.root, "server.log"), "-w", "-t", "60")
		if err != nil {
			lastErr = fmt.Errorf("pg_ctl start: %w: %s\n%s", err, bytes.TrimSpace(out), c.logTail())
			if ctx.Err() != nil {
				break
			}
			if portFree(port) {
				break // not a port clash: retrying will not help
			}
			continue // someone took the port meanwhile: try another
		}
		url := privateURL(port)
		if err := waitReady(ctx, url, 30*time.Second); err != nil {
			return "", fmt.Errorf("private PostgreSQL started in %s but does not accept connections: %w\n%s", c.root, err, c.logTail())
		}
		return url, nil
	}
	return "", fmt.Errorf("private PostgreSQL in %s: %w", c.root, lastErr)
}

// lockDir takes an exclusive flock on <dir>/pg.lock, waiting for it as long

func (c *cluster) readPort() int {
	b, err := os.ReadFile(filepath.Join(c.root, "port"))
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p <= 0 || p > 65535 {
		return 0
	}
	return p
}

// pidFilePort reads the port from postmaster.pid (its fourth line).
func (c *cluster) pidFilePort() int {
	f, err := os.Open(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for i := 1; s.Scan(); i++ {
		if i == 4 {
			p, _ := strconv.Atoi(strings.TrimSpace(s.Text()))
			return p
		}
	}
	return 0
}

func (c *cluster) logTail() string {
	b, err := os.ReadFile(filepath.Join(c.root, "server.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "server.log:\n" + strings.Join(lines, "\n")
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("private PostgreSQL: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until url accepts connections and answers a query.
func waitReady(ctx context.Context, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var err error
	for {
		var conn *pgx.Conn
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err = pgx.Connect(cctx, url)
		if err == nil {
			_, err = conn.Exec(cctx, "SELECT 1")
			conn.Close(context.WithoutCancel(cctx))
		}
		ccancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

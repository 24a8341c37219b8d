package postgres

// The local PostgreSQL used by `make run`, `make test` and `go run ./cmd/devdb`
// when DATABASE_URL is not set.
//
// EnsureServer first looks for a server that already answers on this machine
// (127.0.0.1:5432 and the Debian socket directory /var/run/postgresql, as the
// `postgres` role and as a role named like the OS user, without a password).
// If none does, it runs a private cluster with the machine's own PostgreSQL
// binaries, laid out like this:
//
//	<dataDir>/pg.lock        flock(2) lock: one process at a time sets up or stops the cluster
//	<dataDir>/pg/            cluster directory (owned by the user the server runs as)
//	<dataDir>/pg/data/       PGDATA (initdb: UTF8, superuser "postgres", trust auth on
//	                         local socket and loopback only; listens on 127.0.0.1 only)
//	<dataDir>/pg/port        the TCP port, reused on later starts while it stays free
//	<dataDir>/pg/server.log  the server's log
//	<dataDir>/pg/.s.PGSQL.N  the unix socket (left out if the path would be too long)
//
// PostgreSQL refuses to run as root. When this process is root, initdb and
// pg_ctl run as the `postgres` OS user if there is one, else as a system user
// `cmsdb` created with useradd, through runuser (or su). If that user cannot
// reach <dataDir> (for example a checkout under /root, which is mode 0700), the
// cluster directory goes to /var/lib/halocms-devdb/<hash of dataDir> instead,
// and <dataDir>/pg.location names it.
//
// Environment:
//
//	CMS_FORCE_PRIVATE_PG=1  skip the probe for a local server and always use the
//	                        private cluster (tests of this file, CI checks).
//	CMS_PG_BINDIR=DIR       use the PostgreSQL binaries in DIR (initdb, pg_ctl, postgres).

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const (
	forcePrivateEnv = "CMS_FORCE_PRIVATE_PG"
	binDirEnv       = "CMS_PG_BINDIR"
	// fallbackRoot holds clusters whose dataDir the server's OS user cannot
	// reach (root only).
	fallbackRoot = "/var/lib/halocms-devdb"
	// dbUserName is the OS user created to run the cluster when this process
	// is root and there is no `postgres` user.
	dbUserName = "cmsdb"
	superuser  = "postgres"
)

// EnsureServer returns the URL of a PostgreSQL server that answers: a local
// one if there is one with at least minFreeConns connections to spare
// (max_connections less the reserved ones and those open), otherwise a
// private cluster under dataDir (max_connections 200), which it creates and
// starts if needed. log may be nil.
func EnsureServer(ctx context.Context, dataDir string, minFreeConns int, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !envTrue(os.Getenv(forcePrivateEnv)) {
		if url, ok := probeLocal(ctx, minFreeConns, log); ok {
			return url, nil
		}
	}
	return startPrivate(ctx, dataDir, log)
}

// StopLocalCluster stops the private cluster under dataDir (pg_ctl stop -m
// fast), if there is one and it runs. It leaves the data in place.
func StopLocalCluster(dataDir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil // nothing there
	}
	unlock, err := lockDir(ctx, abs)
	if err != nil {
		return err
	}
	defer unlock()
	root := existingClusterDir(abs)
	if root == "" {
		return nil
	}
	c := &cluster{root: root, data: filepath.Join(root, "data")}
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err != nil {
		return nil
	}
	if err := c.setOwner(false); err != nil {
		return err
	}
	if err := c.findBinaries(); err != nil {
		return err
	}
	out, err := c.run(ctx, "pg_ctl", "stop", "-D", c.data, "-m", "fast", "-w", "-t", "60")
	if err != nil {
		if running, _ := c.running(ctx); !running {
			return nil // stale postmaster.pid
		}
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

func envTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// DefaultDataDir is $CMS_DATA_DIR, else .data in the nearest directory
// upwards that holds go.mod (the repository root), else ./.data: the
// Makefile, cmd/devdb, the tests and the benchmarks agree on one cluster.
func DefaultDataDir() string {
	if d := os.Getenv("CMS_DATA_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ".data"
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".data")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, ".data")
		}
	}
}

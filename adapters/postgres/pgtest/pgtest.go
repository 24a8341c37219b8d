// Package pgtest gives each test its own fresh, migrated PostgreSQL
// database, cloned from a template so that tests stay fast and can run in
// parallel. It talks to the server named by DATABASE_URL, or to the local
// one that `make test` sets up (see postgres.EnsureServer).
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
)

// SuiteConnections is how many connections the test suite needs to spare
// on the server it finds when DATABASE_URL is not set; a local server with
// fewer is passed over for the private cluster. `make test` runs the suite
// with at most two packages and two tests of each at once (-p 2 -parallel 2),
// and it then peaked at 42 connections (2026-11-29, other work beside it);
// cmd/devdb, which `make test` asks for the server, uses the same figure.
const SuiteConnections = 60

var (
	once     sync.Once
	baseURL  string
	template string
	setupErr error
)

// ServerURL returns the URL of the server tests use, starting the local one
// if needed.
func ServerURL(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("pgtest: %v", setupErr)
	}
	return baseURL
}

func setup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	baseURL = os.Getenv("DATABASE_URL")
	if baseURL == "" {
		baseURL, setupErr = postgres.EnsureServer(ctx, postgres.DefaultDataDir(), SuiteConnections, nil)
		if setupErr != nil {
			return
		}
	}
	template, setupErr = ensureTemplate(ctx)
}

// withDB returns url with its database name replaced.
func withDB(raw, db string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		// key=value form
		return raw + " dbname=" + db
	}
	u.Path = "/" + db
	return u.String()
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(postgres.MigrationFiles(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(postgres.MigrationFiles(), p)
		h.Write([]byte(p))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// ensureTemplate creates (once per set of migrations, shared by every test
// process) a migrated database to clone.
func ensureTemplate(ctx context.Context) (string, error) {
	name := "cms_tmpl_" + migrationsHash()
	admin, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return "", fmt.Errorf("connect %s: %w", redact(baseURL), err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock(7265002)`); err != nil {
		return "", err
	}
	defer admin.Exec(ctx, `SELECT pg_advisory_unlock(7265002)`) //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_build"
	_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS `+building+` WITH (FORCE)`)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+building); err != nil {
		return "", err
	}
	pool, err := postgres.Connect(ctx, withDB(baseURL, building))
	if err != nil {
		return "", err
	}
	_, err = postgres.Migrate(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name); err != nil {
		return "", err
	}
	return name, nil
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return raw
}

// URL creates a fresh migrated database for this test, dropped when the test
// ends, and returns its URL.
func URL(t testing.TB) string {
	t.Helper()
	ServerURL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "cms_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close(ctx)
	// CREATE DATABASE ... TEMPLATE fails if someone else is copying the same
	// template at that instant; retry briefly.
	for i := 0; ; i++ {
		_, err = admin.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE `+template)
		if err == nil || i == 50 {
			break
		}
		time.Sleep(time.Duration(20+i*10) * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), baseURL)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	return withDB(baseURL, name)
}

// Pool returns a pool on a fresh migrated database for this test.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	// Small pools: many tests run at once against one server.
	pool, err := postgres.Connect(context.Background(), WithParam(URL(t), "pool_max_conns", "8"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Generic returns a pool on pool's database that runs prepared statements
// from generic plans (see postgres.GenericPlans).
func Generic(t testing.TB, pool *pgxpool.Pool) *pgxpool.Pool {
	t.Helper()
	g, err := postgres.GenericPlans(pool)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(g.Close)
	return g
}

// Begin opens a connection of its own to the database at url and begins
// a transaction on it; both end with the test (the transaction rolled back
// unless it was committed or rolled back before).
func Begin(t testing.TB, url string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // ended before, or rolled back here
	return tx
}

// Strings runs a query whose rows are one text column each (a table dump
// such as row_to_json(x)::text) and returns them, failing t on an error.
func Strings(t testing.TB, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// WithParam returns the database URL raw with one more parameter.
func WithParam(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return raw + " " + key + "=" + value
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

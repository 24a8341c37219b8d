package postgres

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func skipWithoutBinaries(t *testing.T) {
	t.Helper()
	if bins, looked := candidateBinDirs(); len(bins) == 0 {
		t.Skipf("no PostgreSQL server binaries (looked in %v)", looked)
	}
}

func selectOne(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
}

func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// TestPrivateCluster starts a private cluster (whatever else runs on this
// machine), from several goroutines at once, queries it, stops it, and
// restarts it on the same port.
func TestPrivateCluster(t *testing.T) {
	skipWithoutBinaries(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dataDir := t.TempDir()
	// t.TempDir makes its directories 0700; open them up so that, as root,
	// the cluster goes under dataDir itself (see the next test for the
	// other case).
	for _, d := range []string{filepath.Dir(dataDir), dataDir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if err := StopLocalCluster(dataDir); err != nil {
			t.Errorf("StopLocalCluster: %v", err)
		}
	})
	log := testLogger(t)

	const n = 3
	urls := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			urls[i], errs[i] = startPrivate(ctx, dataDir, log)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("startPrivate: %v", errs[i])
		}
		if urls[i] != urls[0] {
			t.Fatalf("concurrent starts disagree: %s vs %s", urls[i], urls[0])
		}
	}
	if existingClusterDir(dataDir) != filepath.Join(dataDir, "pg") {
		t.Fatalf("cluster not under %s/pg (found %q)", dataDir, existingClusterDir(dataDir))
	}
	selectOne(t, ctx, urls[0])

	if err := StopLocalCluster(dataDir); err != nil {
		t.Fatalf("StopLocalCluster: %v", err)
	}
	if err := tryServer(ctx, urls[0], 0); err == nil {
		t.Fatal("server still answers after StopLocalCluster")
	}
	if err := StopLocalCluster(dataDir); err != nil {
		t.Fatalf("second StopLocalCluster: %v", err)
	}

	again, err := startPrivate(ctx, dataDir, log)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if port(t, again) != port(t, urls[0]) {
		t.Errorf("restart moved from port %s to %s", port(t, urls[0]), port(t, again))
	}
	selectOne(t, ctx, again)
}

// TestPrivateClusterUnreachableDir: as root, with a data directory the
// server's OS user cannot traverse, the cluster goes to the fallback place.
func TestPrivateClusterUnreachableDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only meaningful as root")
	}
	skipWithoutBinaries(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dataDir := filepath.Join(t.TempDir(), "data") // the temp dir is 0700 root
	fb := fallbackDir(dataDir)
	t.Cleanup(func() {
		if err := StopLocalCluster(dataDir); err != nil {
			t.Errorf("StopLocalCluster: %v", err)
		}
		if err := os.RemoveAll(fb); err != nil {
			t.Errorf("remove %s: %v", fb, err)
		}
	})
	u, err := startPrivate(ctx, dataDir, testLogger(t))
	if err != nil {
		t.Fatalf("startPrivate: %v", err)
	}
	if got := existingClusterDir(dataDir); got != fb {
		t.Fatalf("cluster in %q, want the fallback %q", got, fb)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pg.location")); err != nil {
		t.Errorf("no pg.location note: %v", err)
	}
	selectOne(t, ctx, u)
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"pg_ctl (PostgreSQL) 15.13 (Debian 15.13-0+deb12u1)\n": "15",
		"pg_ctl (PostgreSQL) 9.6.24\n":                         "9.6",
		"pg_ctl (PostgreSQL) 17beta1\n":                        "17",
		"something else":                                       "",
	} {
		if _, got := parseVersion(in); got != want {
			t.Errorf("parseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfString(t *testing.T) {
	if got := confString(`/a b/it's\x`); got != `'/a b/it''s\\x'` {
		t.Errorf("confString = %s", got)
	}
}

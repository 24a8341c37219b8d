package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// TestDatabaseOutage: while the server's database turns connections
// away (as one restarting does), requests and /readyz are 503s with
// Retry-After naming the database, not 500s; once it accepts them again
// the same requests succeed, without restarting the server. The shared
// PostgreSQL server stays up: only the test server's own database stops
// accepting connections, and the ones it had are ended.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	u, err := url.Parse(ts.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.ServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	allow := func(on bool) {
		t.Helper()
		state := "false"
		if on {
			state = "true"
		}
		if _, err := admin.Exec(ctx, `ALTER DATABASE `+db+` ALLOW_CONNECTIONS `+state); err != nil {
			t.Fatal(err)
		}
	}
	const api = "/core-api/user"
	expectStatus(t, ts.get(api, ts.admin), 200)

	allow(false)
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), `ALTER DATABASE `+db+` ALLOW_CONNECTIONS true`) })
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`,
		strings.TrimPrefix(u.Path, "/")); err != nil {
		t.Fatal(err)
	}

	r := ts.get(api, ts.admin)
	expectStatus(t, r, 503)
	if got := r.Header.Get("Retry-After"); got != "5" {
		t.Errorf("%s: Retry-After %q, want 5", api, got)
	}
	var e struct {
		Error struct {
			Status int
			Extra  map[string]any
			Type   string
		}
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Status != 503 || e.Error.Type != "HaloError" {
		t.Errorf("%s: body %s, want a HALO 503", api, r.Body)
	}
	r = ts.get("/readyz", "")
	expectStatus(t, r, 503)
	var ready map[string]string
	if err := json.Unmarshal(r.Body, &ready); err != nil || ready["status"] != "unavailable" || ready["reason"] != "database" {
		t.Errorf("/readyz: %s, want unavailable for the database", r.Body)
	}
	if got := r.Header.Get("Retry-After"); got != "5" {
		t.Errorf("/readyz: Retry-After %q, want 5", got)
	}

	allow(true)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r = ts.get("/readyz", "")
		if r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %d %s 60 s after the database accepted connections again", r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	expectStatus(t, ts.get(api, ts.admin), 200)
}

package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// TestGenericPlans: the second pool's sessions plan from generic plans,
// on the same database, and the first pool's sessions are left as they
// were.
func TestGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	generic := pgtest.Generic(t, pool)
	var mode, db, genericMode, genericDB string
	if err := pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_database()`).Scan(&mode, &db); err != nil {
		t.Fatal(err)
	}
	if err := generic.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_database()`).Scan(&genericMode, &genericDB); err != nil {
		t.Fatal(err)
	}
	if mode != "auto" || genericMode != "force_generic_plan" || genericDB != db {
		t.Errorf("pool: %s on %s; generic pool: %s on %s", mode, db, genericMode, genericDB)
	}
	if got, want := generic.Config().MaxConns, pool.Config().MaxConns; got != want {
		t.Errorf("generic pool allows %d connections, want %d", got, want)
	}
}

// TestAbandonedStatementsStop: a statement whose context ends (a request
// cancelled, a search past its time) returns at once, and the server
// stops running it instead of going on to its end (pgx sends a cancel
// request when it closes the connection): what a search's time bound
// relies on.
func TestAbandonedStatementsStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	const marker = "abandoned statement 4f1c"
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := pool.Exec(short, `SELECT pg_sleep(60) /* `+marker+` */`)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a 60 s statement under a 200 ms context: %v after %s", err, time.Since(start))
	}
	running := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
			marker).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for running() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned statement still runs %s after its context ended", time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

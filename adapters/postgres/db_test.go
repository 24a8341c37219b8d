package postgres_test

import (
	"context"
	"testing"

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

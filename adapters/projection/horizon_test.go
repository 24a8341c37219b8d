package projection_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
)

// The probe a fruitless query makes (are events waiting past the
// checkpoint?), which a sync makes too (when was the first of them
// recorded?), walks the log's primary key from the checkpoint, with custom
// and generic plans alike: it runs after every idle poll of every runner,
// and a scan of the log would cost milliseconds per million events.
func TestFirstPendingReadsTheIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, sql := range []string{`INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
		SELECT 's' || (g % 500), g / 500, gen_random_uuid(), CASE WHEN g % 3 = 0 THEN 'a.x' ELSE 'b.y' END, 1, '{}', '{}'
		FROM generate_series(1, 20000) g`,
		`INSERT INTO projection_checkpoints (name, tx_id, position) SELECT 'probe', max(transaction_id), max(global_position) FROM events`,
		`ANALYZE events`} {
		if _, err := e.pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	generic := pgtest.Generic(t, e.pool)
	for name, db := range map[string]*pgxpool.Pool{"custom": e.pool, "generic": generic} {
		for _, skip := range [][]string{{}, {"a.x"}} {
			for _, sql := range []string{projection.FirstPendingQuery, projection.PendingStampQuery} {
				rows, err := db.Query(ctx, "EXPLAIN "+sql, "probe", skip)
				if err != nil {
					t.Fatal(err)
				}
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				plan := strings.Join(lines, "\n")
				if !strings.Contains(plan, "Index Scan using events_pkey") || strings.Contains(plan, "Seq Scan on events") || strings.Contains(plan, "Bitmap") {
					t.Errorf("%s plan, skipping %v: the probe should walk events_pkey from the checkpoint:\n%s\n%s", name, skip, sql, plan)
				}
			}
		}
	}
	first := func(types ...string) (time.Time, bool) {
		t.Helper()
		var at time.Time
		err := e.pool.QueryRow(ctx, projection.FirstPendingQuery, "probe", append([]string{}, types...)).Scan(&at)
		if errors.Is(err, pgx.ErrNoRows) {
			return at, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return at, true
	}
	if at, ok := first(); ok {
		t.Fatalf("at the checkpoint: an event recorded at %s waits", at)
	}
	var late time.Time
	if err := e.pool.QueryRow(ctx, `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata, recorded_at)
		VALUES ('late', 0, gen_random_uuid(), 'a.x', 1, '{}', '{}', now() - interval '1 hour') RETURNING recorded_at`).Scan(&late); err != nil {
		t.Fatal(err)
	}
	if at, ok := first(); !ok || !at.Equal(late) {
		t.Errorf("an a.x event past the checkpoint: first pending %s, %v; want %s", at, ok, late)
	}
	if at, ok := first("a.x"); ok {
		t.Errorf("an a.x event past the checkpoint, skipping a.x: first pending %s, want none", at)
	}
}

// A projection's horizon is the database's clock, lowered to the start of
// any transaction on its database that has written, to the start of any
// statement running there, and to the earliest stamp of the transaction of
// the first event the projection has yet to apply; an idle transaction
// that has written nothing, and anything on another database, do not
// lower it.
func TestHorizon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	rt := projection.New(e.pool, e.store, nil, testLogger(), &counter{name: "hz"}) // not started: no runner's transactions
	e.appendEvents(t, "h", 2, 5)
	e.waitReadable(t)
	if _, err := e.pool.Exec(ctx, `INSERT INTO projection_checkpoints (name, tx_id, position)
		SELECT 'hz', max(transaction_id), max(global_position) FROM events`); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time {
		t.Helper()
		var at time.Time
		if err := e.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	horizon := func() time.Time {
		t.Helper()
		at, err := rt.Horizon(ctx, "hz")
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	// Between two readings of the database's clock, unless a statement
	// of this test's store (a NOTIFY) is still running: it is retried.
	isNow := func(what string) {
		t.Helper()
		var before, h, after time.Time
		for range 50 {
			before, h, after = clock(), horizon(), clock()
			if !h.Before(before) && !h.After(after) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("%s: horizon %s, want the database's clock (between %s and %s)", what, h, before, after)
	}
	isNow("caught up, no transaction open")
	begin := func(url string, write bool) (pgx.Tx, time.Time) {
		t.Helper()
		tx := pgtest.Begin(t, url)
		var began time.Time
		sql := `SELECT now()`
		if write {
			sql = `SELECT now() FROM pg_current_xact_id()`
		}
		if err := tx.QueryRow(ctx, sql).Scan(&began); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		return tx, began
	}

	begin(pgtest.ServerURL(t), true)
	isNow("a transaction that has written, open on another database")
	idle, _ := begin(e.url, false)
	isNow("a transaction open on the database that has written nothing")
	if err := idle.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	written, began := begin(e.url, true)
	if h := horizon(); h.After(began) {
		t.Errorf("a transaction that has written, open since %s: horizon %s, after it", began, h)
	}
	if err := written.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	isNow("the transaction ended")

	running, _ := begin(e.url, false)
	done := make(chan error, 1)
	go func() { _, err := running.Exec(ctx, `SELECT pg_sleep(0.5)`); done <- err }()
	var started time.Time
	for deadline := time.Now().Add(5 * time.Second); started.IsZero(); time.Sleep(5 * time.Millisecond) {
		err := e.pool.QueryRow(ctx, `SELECT query_start FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'SELECT pg_sleep(0.5)' AND state = 'active'`).Scan(&started)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) || time.Now().After(deadline) {
			t.Fatalf("the running statement: %v", err)
		}
	}
	if h := horizon(); h.After(started) {
		t.Errorf("a statement running since %s: horizon %s, after it", started, h)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Two events of one transaction, stamped an hour and two hours ago,
	// the first already applied.
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var first, second time.Time
	var firstTx, firstPos int64
	const insert = `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata, recorded_at)
		VALUES ($1, 0, gen_random_uuid(), 'a.x', 1, '{}', '{}', now() - $2 * interval '1 hour')
		RETURNING recorded_at, transaction_id::text::bigint, global_position`
	if err := tx.QueryRow(ctx, insert, "early", 2).Scan(&first, &firstTx, &firstPos); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, insert, "late", 1).Scan(&second, new(int64), new(int64)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if h := horizon(); !h.Equal(first) {
		t.Errorf("two events past the checkpoint, stamped %s and %s: horizon %s, want the first", first, second, h)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3 WHERE name = $1`,
		"hz", strconv.FormatInt(firstTx, 10), firstPos); err != nil {
		t.Fatal(err)
	}
	if h := horizon(); !h.Equal(first) {
		t.Errorf("the second event of a transaction pending, stamped %s, the first %s: horizon %s, want the transaction's earliest", second, first, h)
	}
	if _, err := rt.Horizon(ctx, "nope"); !errors.Is(err, projection.ErrUnknownProjection) {
		t.Errorf("Horizon of an unknown projection: %v", err)
	}
}

// With track_activities off, sessions hide their transactions from a
// horizon: SessionsVisible says so.
func TestSessionsVisible(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if err := projection.SessionsVisible(ctx, e.pool); err != nil {
		t.Fatalf("track_activities on: %v", err)
	}
	conn, err := pgx.Connect(ctx, e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET track_activities = off`); err != nil {
		t.Fatal(err)
	}
	if err := projection.SessionsVisible(ctx, conn); !errors.Is(err, projection.ErrSessionsHidden) {
		t.Errorf("track_activities off: %v, want ErrSessionsHidden", err)
	}
}

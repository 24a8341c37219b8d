package projection_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

func TestWaitFor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &counter{name: "ryw"}
	// The runner looks at the log on its own once an hour: only a
	// notification can wake it within the wait's bound. The bound is wide
	// because other tests' transactions, anywhere in the cluster, can hide
	// new events from the runner for many seconds on a loaded machine (a
	// run with two busy loops beside the whole suite once took over 20 s).
	r := e.start(t, func(o *projection.Options) { o.WaitTimeout, o.IdleWait = time.Minute, time.Hour }, c)
	caughtUp(t, e, r.rt)

	// Caught up: true (woken by NOTIFY: the idle wait is an hour).
	var worst time.Duration
	var waits []time.Duration
	for i := range 20 {
		pos := e.appendEvents(t, "w", 3, 1+i%3)
		start := time.Now()
		if !r.rt.WaitFor(context.Background(), pos, "ryw") {
			// What may have hidden the event: the oldest transactions of
			// the cluster, and whether the event is below the snapshot's
			// xmin now.
			var visible bool
			_ = e.pool.QueryRow(context.Background(), `SELECT $1::xid8 < pg_snapshot_xmin(pg_current_snapshot())`,
				strconv.FormatUint(pos.TxID, 10)).Scan(&visible)
			var oldest []string
			if rows, err := e.pool.Query(context.Background(), `SELECT datname || ' ' || coalesce(now() - xact_start, '0')::text || ' ' ||
				left(query, 80) FROM pg_stat_activity WHERE backend_xmin IS NOT NULL OR backend_xid IS NOT NULL
				ORDER BY xact_start LIMIT 5`); err == nil {
				oldest, _ = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			t.Fatalf("WaitFor(%s) = false: the runner is not woken by notifications (runner %+v; event below xmin now: %v; oldest transactions: %q)",
				pos, r.rt.Health()[0], visible, oldest)
		}
		worst = max(worst, time.Since(start))
		waits = append(waits, time.Since(start))
		var n int64
		if err := e.pool.QueryRow(context.Background(), `SELECT coalesce(sum(n), 0) FROM public.ryw_types`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		var want int64
		_ = e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&want)
		if n != want {
			t.Fatalf("after WaitFor: %d events projected, %d appended", n, want)
		}
	}
	slices.Sort(waits)
	median := waits[len(waits)/2]
	t.Logf("read-your-writes: median wait %s, worst %s", median, worst)

	// Stopped: false after the bound.
	r.stop()
	pos := e.appendEvents(t, "w", 3, 1)
	start := time.Now()
	if r.rt.WaitForBound(context.Background(), 200*time.Millisecond, pos, "ryw") {
		t.Fatal("WaitFor = true while the projection is stopped")
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("WaitFor gave up after %s, want about 200ms", took)
	}
	if !r.rt.WaitFor(context.Background(), event.Position{}) {
		t.Error("WaitFor(zero) = false")
	}
}

// commitFails is a projector whose batches apply and then fail to commit
// (a deferred unique constraint): its checkpoint never moves.
type commitFails struct{ name string }

func (c commitFails) Name() string     { return c.name }
func (c commitFails) Tables() []string { return []string{c.name + "_rows"} }
func (c commitFails) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s.%s_rows (k int, CONSTRAINT once UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)`, schema, c.name))
	return err
}
func (c commitFails) Apply(ctx context.Context, db projections.DB, schema string, _ []event.Recorded) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.%s_rows VALUES (1), (1)`, schema, c.name))
	return err
}

// TestWaitForIgnoresAFailedCommit: a batch that applied but did not
// commit (watermill-sql only logs a failed commit) is not caught up.
func TestWaitForIgnoresAFailedCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start(t, nil, commitFails{name: "nocommit"})
	pos := e.appendEvents(t, "s", 1, 1)
	if r.rt.WaitForBound(context.Background(), time.Second, pos, "nocommit") {
		_, cp := e.checkpoint(t, "nocommit")
		t.Errorf("WaitFor(%s) = true; the checkpoint in the table is %s", pos, cp)
	}
	// On a loaded machine the first attempt may come after the bound.
	for deadline := time.Now().Add(10 * time.Second); r.rt.Health()[0].Failures == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the failed commits are not counted: %+v", r.rt.Health()[0])
		}
	}
}

// TestWaitForAfterLostTables: a projection whose tables were lost replays
// the log from the start (another process re-created them); a process
// that saw it caught up before learns so at its next read of the
// checkpoints, and does not say it is caught up meanwhile.
func TestWaitForAfterLostTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.start(t, nil, &counter{name: "lost"})
	pos := e.appendEvents(t, "s", 7, 50)
	caughtUp(t, e, first.rt, "lost")
	first.stop()
	if _, err := e.pool.Exec(context.Background(), `DROP SCHEMA proj_lost_v1 CASCADE`); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	e.start(t, nil, &counter{name: "lost", mid: func(ctx context.Context, _ string, _ int) error {
		select { // the replay's first batch never commits while the test looks
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	// Someone waits for a later event meanwhile: the watcher reads the
	// table again, which takes back what it knew.
	first.rt.WaitForBound(context.Background(), 100*time.Millisecond, event.Position{TxID: pos.TxID + 1000}, "lost")
	if first.rt.WaitForBound(context.Background(), 300*time.Millisecond, pos, "lost") {
		_, cp := e.checkpoint(t, "lost")
		t.Errorf("WaitFor(%s) = true while the projection replays from %s", pos, cp)
	}
}

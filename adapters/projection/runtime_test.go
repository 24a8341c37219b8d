package projection_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// Test events.

type itemCreated struct{ ID string }

func (itemCreated) EventType() string { return "test.item_created" }

type itemBumped struct {
	ID string
	By int
}

func (itemBumped) EventType() string { return "test.item_bumped" }

func newRegistry() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(itemCreated{}, 1)
	r.Register(itemBumped{}, 1)
	return r
}

// counter is a set-wise test projector: per stream, the number of events,
// the highest stream version and the sum of bumps; per event type, the
// number of events. Applied exactly once and in order, n equals
// last_version for every stream.
type counter struct {
	name string
	// mid, if set, runs between the two halves of every Apply (after the
	// first half is written): it can fail, cancel, or block.
	mid func(ctx context.Context, schema string, n int) error
	// gate, if set, detects two Apply calls running at once.
	gate *gate
	// skew, if set, makes Apply into that schema count one extra event
	// per batch (a projector that is not deterministic).
	skew string
	// extra adds a table (a projector whose tables changed).
	extra   bool
	applied atomic.Int64
}

type gate struct {
	in      atomic.Int32
	overlap atomic.Bool
}

func (c *counter) Name() string { return c.name }
func (c *counter) Tables() []string {
	ts := []string{c.name + "_streams", c.name + "_types"}
	if c.extra {
		ts = append(ts, c.name+"_extra")
	}
	return ts
}

func (c *counter) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.%[2]s_streams (stream_id text PRIMARY KEY, n bigint NOT NULL, last_version bigint NOT NULL, bumps bigint NOT NULL);
CREATE TABLE %[1]s.%[2]s_types (event_type text PRIMARY KEY, n bigint NOT NULL);`, schema, c.name))
	if err == nil && c.extra {
		_, err = db.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s.%s_extra (k text PRIMARY KEY)`, schema, c.name))
	}
	return err
}

func (c *counter) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	if c.gate != nil {
		if c.gate.in.Add(1) > 1 {
			c.gate.overlap.Store(true)
		}
		defer c.gate.in.Add(-1)
		time.Sleep(time.Millisecond) // widen the window an overlap would need
	}
	half := len(events) / 2
	if err := c.write(ctx, db, schema, events[:half]); err != nil {
		return err
	}
	if c.mid != nil {
		if err := c.mid(ctx, schema, len(events)); err != nil {
			return err
		}
	}
	if err := c.write(ctx, db, schema, events[half:]); err != nil {
		return err
	}
	c.applied.Add(int64(len(events)))
	return nil
}

func (c *counter) write(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	if len(events) == 0 {
		return nil
	}
	type agg struct{ n, last, bumps int64 }
	streams := map[string]*agg{}
	var order []string
	types := map[string]int64{}
	for _, e := range events {
		a := streams[e.StreamID]
		if a == nil {
			a = &agg{}
			streams[e.StreamID] = a
			order = append(order, e.StreamID)
		}
		a.n++
		a.last = max(a.last, e.StreamVersion)
		switch d := e.Data.(type) {
		case itemCreated:
		case itemBumped:
			a.bumps += int64(d.By)
		default:
			return fmt.Errorf("event %s not decoded: %T", e.Type, e.Data)
		}
		types[e.Type]++
	}
	if c.skew != "" && schema == c.skew {
		streams[order[0]].n++
	}
	ids := make([]string, len(order))
	ns, lasts, bumps := make([]int64, len(order)), make([]int64, len(order)), make([]int64, len(order))
	for i, id := range order {
		a := streams[id]
		ids[i], ns[i], lasts[i], bumps[i] = id, a.n, a.last, a.bumps
	}
	t := schema + "." + c.name
	if _, err := db.Exec(ctx, `INSERT INTO `+t+`_streams AS s (stream_id, n, last_version, bumps)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[])
		ON CONFLICT (stream_id) DO UPDATE SET n = s.n + excluded.n,
			last_version = greatest(s.last_version, excluded.last_version), bumps = s.bumps + excluded.bumps`,
		ids, ns, lasts, bumps); err != nil {
		return err
	}
	var tn []string
	var tc []int64
	for k, v := range types {
		tn, tc = append(tn, k), append(tc, v)
	}
	_, err := db.Exec(ctx, `INSERT INTO `+t+`_types AS s (event_type, n) SELECT * FROM unnest($1::text[], $2::bigint[])
		ON CONFLICT (event_type) DO UPDATE SET n = s.n + excluded.n`, tn, tc)
	return err
}

// Ground truth, straight from the log (up to a position, if given).
func truthStreams(upTo *event.Position) string {
	return `SELECT stream_id, count(*)::bigint, max(stream_version), coalesce(sum((data->>'By')::bigint), 0)::bigint
		FROM events ` + upToClause(upTo) + ` GROUP BY stream_id`
}

func truthTypes(upTo *event.Position) string {
	return `SELECT event_type, count(*)::bigint FROM events ` + upToClause(upTo) + ` GROUP BY event_type`
}

func upToClause(p *event.Position) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf(`WHERE (transaction_id, global_position) <= ('%d'::xid8, %d)`, p.TxID, p.Pos)
}

// diff counts the rows that are in only one of two queries' results.
func diff(t *testing.T, pool *pgxpool.Pool, a, b string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM (((`+a+`) EXCEPT ALL (`+b+`)) UNION ALL ((`+b+`) EXCEPT ALL (`+a+`))) d`).Scan(&n); err != nil {
		t.Fatalf("diff: %v", err)
	}
	return n
}

// assertExact checks that the projection read through its public views
// equals the log's ground truth (up to a position, if given).
func assertExact(t *testing.T, pool *pgxpool.Pool, c *counter, upTo *event.Position) {
	t.Helper()
	if d := diff(t, pool, `SELECT stream_id, n, last_version, bumps FROM public.`+c.name+`_streams`, truthStreams(upTo)); d != 0 {
		t.Errorf("%s_streams differs from the log in %d rows", c.name, d)
	}
	if d := diff(t, pool, `SELECT event_type, n FROM public.`+c.name+`_types`, truthTypes(upTo)); d != 0 {
		t.Errorf("%s_types differs from the log in %d rows", c.name, d)
	}
	var bad int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM public.`+c.name+`_streams WHERE n <> last_version`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d streams applied twice or with gaps", bad)
	}
}

type env struct {
	url   string
	pool  *pgxpool.Pool
	store *postgres.EventStore
}

func newEnv(t *testing.T) *env {
	t.Helper()
	url := pgtest.URL(t)
	return openEnv(t, url)
}

func openEnv(t *testing.T, url string) *env {
	t.Helper()
	pool, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := postgres.NewEventStore(pool, newRegistry())
	t.Cleanup(store.Close)
	return &env{url: url, pool: pool, store: store}
}

func testLogger() *slog.Logger {
	if os.Getenv("CMS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// appendEvents appends n events over streams streams (1 to 3 events per
// append) and returns the last position.
func (e *env) appendEvents(t testing.TB, prefix string, streams, n int) event.Position {
	t.Helper()
	ctx := context.Background()
	var last event.Position
	for i := 0; i < n; {
		k := 1 + i%3
		if i+k > n {
			k = n - i
		}
		stream := event.StreamID(prefix, fmt.Sprint(i%streams))
		evs := make([]event.Event, k)
		for j := range evs {
			if (i+j)%2 == 0 {
				evs[j] = event.Event{Data: itemCreated{ID: stream}}
			} else {
				evs[j] = event.Event{Data: itemBumped{ID: stream, By: (i + j) % 7}}
			}
		}
		res, err := e.store.Append(ctx, stream, event.AnyVersion, evs...)
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		if last.Less(res.Last) {
			last = res.Last
		}
		i += k
	}
	return last
}

// appendConcurrently runs workers appenders of n events each.
func (e *env) appendConcurrently(t *testing.T, workers, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.appendEvents(t, fmt.Sprintf("w%d", w), 7, n)
		}()
	}
	wg.Wait()
}

type running struct {
	rt     *projection.Runtime
	cancel context.CancelFunc
}

func (r running) stop() { r.cancel(); r.rt.Wait() }

func (e *env) start(t *testing.T, configure func(*projection.Options), ps ...projections.Projector) running {
	t.Helper()
	opts := projection.Options{RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}
	if configure != nil {
		configure(&opts)
	}
	rt := projection.NewRuntime(e.pool, e.store, nil, testLogger(), opts, ps...)
	ctx, cancel := context.WithCancel(context.Background())
	if err := rt.Start(ctx); err != nil {
		cancel()
		t.Fatalf("start: %v", err)
	}
	r := running{rt, cancel}
	t.Cleanup(r.stop)
	return r
}

func (e *env) checkpoint(t *testing.T, name string) (int, event.Position) {
	t.Helper()
	var v int
	var tx, pos int64
	if err := e.pool.QueryRow(context.Background(), `SELECT version, tx_id::text::bigint, position FROM projection_checkpoints WHERE name = $1`,
		name).Scan(&v, &tx, &pos); err != nil {
		t.Fatal(err)
	}
	return v, event.Position{TxID: uint64(tx), Pos: pos}
}

// lastCommitted is the position of the newest committed event. (Head
// only shows what a reader may read yet: an open transaction anywhere in
// the cluster, a projection's batch included, can hide newer events for a
// moment.)
func (e *env) lastCommitted(t testing.TB) event.Position {
	t.Helper()
	var tx, pos int64
	if err := e.pool.QueryRow(context.Background(), `SELECT transaction_id::text::bigint, global_position FROM events
		ORDER BY transaction_id DESC, global_position DESC LIMIT 1`).Scan(&tx, &pos); errors.Is(err, pgx.ErrNoRows) {
		return event.Position{}
	} else if err != nil {
		t.Fatal(err)
	}
	return event.Position{TxID: uint64(tx), Pos: pos}
}

// waitReadable waits until every committed event is readable (no older
// transaction still open anywhere in the cluster hides some).
func (e *env) waitReadable(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		var hidden int64
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events
			WHERE transaction_id >= pg_snapshot_xmin(pg_current_snapshot())`).Scan(&hidden); err != nil {
			t.Fatal(err)
		}
		if hidden == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still hidden", hidden)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// caughtUp waits (generously) for the projections to reach the last
// committed event.
func caughtUp(t *testing.T, e *env, rt *projection.Runtime, names ...string) {
	t.Helper()
	if !rt.WaitForBound(context.Background(), 20*time.Second, e.lastCommitted(t), names...) {
		t.Fatalf("projections %v did not catch up", names)
	}
}

// With batches of 300, the runner decodes each batch on several
// goroutines.
func TestProjectsEveryEventExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{64, 300} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := &counter{name: "once"}
			e.appendEvents(t, "before", 13, 500)
			r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = batch }, c)
			e.appendConcurrently(t, 4, 150)
			caughtUp(t, e, r.rt, "once")
			assertExact(t, e.pool, c, nil)
			if got := c.applied.Load(); got != 1100 {
				t.Errorf("applied %d events, want 1100", got)
			}
			if v, _ := e.checkpoint(t, "once"); v != 1 {
				t.Errorf("version %d, want 1", v)
			}
		})
	}
}

// Tables lost (a schema dropped by hand) are re-created and replayed from
// the start of the log.
func TestLostTablesAreReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 7, 200)
	r := e.start(t, nil, &counter{name: "lost"})
	caughtUp(t, e, r.rt)
	r.stop()
	if _, err := e.pool.Exec(context.Background(), `DROP SCHEMA proj_lost_v1 CASCADE`); err != nil {
		t.Fatal(err)
	}
	c := &counter{name: "lost"}
	r2 := e.start(t, nil, c)
	caughtUp(t, e, r2.rt)
	assertExact(t, e.pool, c, nil)
	if got := c.applied.Load(); got != 200 {
		t.Errorf("replayed %d events, want 200", got)
	}
}

// A batch that fails half-way (after part of its writes) is rolled back
// entirely and retried: nothing lost, nothing applied twice.
func TestFailureMidBatchIsRolledBackAndRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls, failures atomic.Int32
	c := &counter{name: "flaky"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1)%3 == 2 {
			failures.Add(1)
			return errors.New("injected failure")
		}
		return nil
	}
	e.appendEvents(t, "s", 11, 600)
	var onErr atomic.Int32
	r := e.start(t, func(o *projection.Options) {
		o.LiveBatchSize = 50
		o.OnError = func(string, error) { onErr.Add(1) }
	}, c)
	e.appendConcurrently(t, 3, 100)
	caughtUp(t, e, r.rt, "flaky")
	assertExact(t, e.pool, c, nil)
	if failures.Load() == 0 || onErr.Load() == 0 {
		t.Errorf("no failure injected (%d) or reported (%d)", failures.Load(), onErr.Load())
	}
}

// Cancelling the runtime in the middle of a batch (its first half written)
// leaves exactly the committed prefix; a new runtime finishes the job.
func TestCancelMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 17, 1000)
	e.waitReadable(t) // so that the first batches are full
	var calls atomic.Int32
	midBatch := make(chan struct{})
	c := &counter{name: "crashy"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1) == 4 {
			close(midBatch)
			<-ctx.Done() // the "crash": the context ends in the middle of the batch
			return ctx.Err()
		}
		return nil
	}
	r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, c)
	<-midBatch
	r.stop()

	_, cp := e.checkpoint(t, "crashy")
	if cp.IsZero() || !cp.Less(e.lastCommitted(t)) {
		t.Fatalf("checkpoint %s: want between the start and the head", cp)
	}
	assertExact(t, e.pool, c, &cp) // exactly the committed batches, no half batch
	var applied int64
	if err := e.pool.QueryRow(context.Background(), `SELECT sum(n) FROM public.crashy_types`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 300 {
		t.Errorf("%d events applied before the crash, want 3 batches of 100", applied)
	}

	c2 := &counter{name: "crashy"}
	r2 := e.start(t, nil, c2)
	e.appendEvents(t, "after", 5, 50)
	caughtUp(t, e, r2.rt, "crashy")
	assertExact(t, e.pool, c2, nil)
	if got := c2.applied.Load(); got != 1050-300 {
		t.Errorf("restarted runtime applied %d events, want %d", got, 1050-300)
	}
}

// A process killed with SIGKILL in the middle of a batch loses nothing and
// applies nothing twice.
func TestKillMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 9, 1000)
	e.waitReadable(t) // so that the first batches are full

	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunnerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "CMS_KILL_HELPER_URL="+e.url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	found := make(chan bool, 1)
	go func() {
		ok := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "MID-BATCH") {
				ok = true
				break
			}
		}
		found <- ok
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-found:
		if !ok {
			_ = cmd.Wait()
			t.Fatal("helper ended without reaching the middle of a batch")
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("helper did not reach the middle of a batch")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	_, cp := e.checkpoint(t, "killed")
	assertExact(t, e.pool, &counter{name: "killed"}, &cp)
	var applied int64
	if err := e.pool.QueryRow(context.Background(), `SELECT coalesce(sum(n), 0) FROM public.killed_types`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 200 {
		t.Errorf("%d events applied before the kill, want 2 batches of 100", applied)
	}

	c := &counter{name: "killed"}
	r := e.start(t, nil, c)
	caughtUp(t, e, r.rt, "killed")
	assertExact(t, e.pool, c, nil)
	if got := c.applied.Load(); got != 800 {
		t.Errorf("restarted runtime applied %d events, want 800", got)
	}
}

// TestKilledRunnerHelper is the process TestKillMidBatchThenRestart kills.
func TestKilledRunnerHelper(t *testing.T) {
	url := os.Getenv("CMS_KILL_HELPER_URL")
	if url == "" {
		t.Skip("helper process only")
	}
	e := openEnv(t, url)
	var calls atomic.Int32
	c := &counter{name: "killed"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1) == 3 {
			fmt.Println("MID-BATCH")
			time.Sleep(time.Minute)
		}
		return nil
	}
	e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, c)
	time.Sleep(time.Minute)
}

// Events whose notification came before the runner listened, and that an
// open transaction hides from its first query, are still picked up soon
// after that transaction ends, though the runner's idle wait is an hour:
// the fruitless query finds them waiting past the checkpoint, and the
// runner polls fast.
func TestRunnerFindsEventsHiddenBeforeItListened(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// The runtime's listener listens already, so that its start wakes no
	// runner: only the events' notification could, and it is gone.
	l := postgres.NewListener(e.pool, postgres.NotifyChannel, testLogger())
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	go l.Run(lctx)
	for deadline := time.Now().Add(10 * time.Second); !l.Listening(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("listener never listened")
		}
	}
	// An open transaction with an id hides every later commit from readers.
	hider, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hider.Rollback(ctx) //nolint:errcheck
	if _, err := hider.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	pos := e.appendEvents(t, "hidden", 2, 5)
	time.Sleep(100 * time.Millisecond) // their notification has come and gone

	c := &counter{name: "hidden"}
	rt := projection.NewRuntime(e.pool, e.store, l, testLogger(),
		projection.Options{IdleWait: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}, c)
	rctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); rt.Wait() }()
	if err := rt.Start(rctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the runner's first query finds nothing
	if n := c.applied.Load(); n != 0 {
		t.Fatalf("applied %d events hidden by an open transaction", n)
	}
	if err := hider.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if !rt.WaitForBound(ctx, 20*time.Second, pos, "hidden") {
		t.Fatalf("the hidden events were not applied within 20s of the transaction's end (runner %+v)", rt.Health()[0])
	}
	t.Logf("applied %s after the hiding transaction ended", time.Since(start).Round(time.Millisecond))
	assertExact(t, e.pool, c, nil)
}

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

// Two runtimes (two processes) running the same projection never apply at
// the same time and together apply every event exactly once.
func TestTwoRuntimesSameProjection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := &gate{}
	c1, c2 := &counter{name: "shared", gate: g}, &counter{name: "shared", gate: g}
	e.appendEvents(t, "pre", 5, 300)
	e2 := openEnv(t, e.url) // the second process has its own pool
	cfg := func(o *projection.Options) { o.LiveBatchSize = 20; o.IdleWait = 50 * time.Millisecond }
	r1 := e.start(t, cfg, c1)
	r2 := e2.start(t, cfg, c2)
	e.appendConcurrently(t, 4, 200)
	caughtUp(t, e, r1.rt, "shared")
	caughtUp(t, e, r2.rt, "shared")
	assertExact(t, e.pool, c1, nil)
	if g.overlap.Load() {
		t.Error("two runners applied batches of the same projection at the same time")
	}
	n1, n2 := c1.applied.Load(), c2.applied.Load()
	if n1+n2 != 1100 {
		t.Errorf("applied %d + %d events, want 1100 in all", n1, n2)
	}
	t.Logf("runtime 1 applied %d events, runtime 2 %d", n1, n2)
}

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

// statusWhen polls Status until ok holds for the first projection (events
// become readable once no older transaction in the cluster is running) or
// twenty seconds pass.
func statusWhen(t *testing.T, rt *projection.Runtime, ok func(projection.Status) bool) []projection.Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := rt.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(st[0]) || time.Now().After(deadline) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &counter{name: "stat"}
	e.appendEvents(t, "s", 4, 120)
	e.waitReadable(t)
	time.Sleep(20 * time.Millisecond)

	rt := projection.New(e.pool, e.store, nil, testLogger(), c)
	st := statusWhen(t, rt, func(s projection.Status) bool { return s.LagEvents == 120 })
	if len(st) != 1 || st[0].Name != "stat" || !st[0].Registered || st[0].LagEvents != 120 || st[0].LagSeconds <= 0 {
		t.Fatalf("before start: %+v, want lag of 120 events and > 0s", st)
	}
	if err := rt.Ready(); err == nil {
		t.Error("Ready before Start = nil")
	}

	r := e.start(t, nil, c)
	caughtUp(t, e, r.rt)
	st = statusWhen(t, r.rt, func(s projection.Status) bool { return s.LagEvents == 0 })
	s := st[0]
	if s.LagEvents != 0 || s.LagSeconds != 0 || s.Version != 1 || s.Checkpoint != e.lastCommitted(t) || s.Runner == nil || s.Runner.State != projection.StateRunning {
		t.Fatalf("caught up: %+v (runner %+v)", s, s.Runner)
	}
	if err := r.rt.Ready(); err != nil {
		t.Errorf("Ready: %v", err)
	}

	r.stop()
	e.appendEvents(t, "s", 4, 10)
	st = statusWhen(t, r.rt, func(s projection.Status) bool { return s.LagEvents == 10 })
	if st[0].LagEvents != 10 || st[0].LagSeconds <= 0 {
		t.Errorf("stopped behind: lag %d events, %fs; want 10 and > 0", st[0].LagEvents, st[0].LagSeconds)
	}
	if err := r.rt.Ready(); err == nil {
		t.Error("Ready after stop = nil")
	}
}

// Rebuild, run by another "process" while the live runtime runs and events
// keep coming: the new version equals the live one (verified in the switch
// transaction) and the log; reads switch to it; the live runtime goes on
// writing into it.
func TestRebuildWhileLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live := &counter{name: "rb"}
	e.appendEvents(t, "s", 50, 3000)
	r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, live)

	stop := make(chan struct{})
	var appended atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e.appendEvents(t, fmt.Sprintf("live%d", w), 9, 3)
				appended.Add(3)
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}

	e.waitReadable(t)
	// The rebuilding process: its own pool and runtime, not started.
	e2 := openEnv(t, e.url)
	rebuilder := projection.New(e2.pool, e2.store, nil, testLogger(), &counter{name: "rb"})
	var mu sync.Mutex
	var calls int
	var lastDone, lastTotal int64
	res, err := rebuilder.RebuildWith(context.Background(), "rb", projection.RebuildOptions{
		BatchSize: 500,
		Verify:    true,
		Progress: func(done, total int64) {
			mu.Lock()
			defer mu.Unlock()
			if done < lastDone {
				t.Errorf("progress went back from %d to %d", lastDone, done)
			}
			calls++
			lastDone, lastTotal = done, total
		},
	})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	t.Logf("rebuild: %+v (%d progress calls)", res, calls)
	if res.Version != 2 || res.OldVersion != 1 || !res.Verified || !res.OldDropped {
		t.Errorf("result %+v", res)
	}
	var upTo int64
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE (transaction_id, global_position) <= ($1::text::xid8, $2)`,
		fmt.Sprint(res.Position.TxID), res.Position.Pos).Scan(&upTo); err != nil {
		t.Fatal(err)
	}
	if res.Events != upTo || upTo < 2500 {
		t.Errorf("rebuild replayed %d events, the log holds %d up to %s", res.Events, upTo, res.Position)
	}
	if calls < 6 || lastDone != res.Events || lastTotal != lastDone {
		t.Errorf("progress: %d calls, last %d/%d, want ≥ 6 ending at %d/%d", calls, lastDone, lastTotal, res.Events, res.Events)
	}

	// Reads go to v2.
	for _, table := range live.Tables() {
		var schema string
		if err := e.pool.QueryRow(context.Background(), `SELECT table_schema FROM information_schema.view_table_usage
			WHERE view_schema = 'public' AND view_name = $1`, table).Scan(&schema); err != nil {
			t.Fatal(err)
		}
		if schema != "proj_rb_v2" {
			t.Errorf("view %s reads %s, want proj_rb_v2", table, schema)
		}
	}
	var v1 bool
	_ = e.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'proj_rb_v1')`).Scan(&v1)
	if v1 {
		t.Error("old schema proj_rb_v1 still exists")
	}

	// The live runtime keeps projecting, now into v2.
	before := live.applied.Load()
	time.Sleep(150 * time.Millisecond)
	close(stop)
	wg.Wait()
	e.appendEvents(t, "after", 3, 30)
	caughtUp(t, e, r.rt, "rb")
	if live.applied.Load() == before {
		t.Error("the live runtime applied nothing after the switch")
	}
	if v, _ := e.checkpoint(t, "rb"); v != 2 {
		t.Errorf("live version %d, want 2", v)
	}
	assertExact(t, e.pool, live, nil)
	t.Logf("%d events appended during the test's rebuild phase", appended.Load())

	st, err := r.rt.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Version != 2 || st[0].Rebuild != nil || st[0].LagEvents != 0 {
		t.Errorf("status after rebuild: %+v", st[0])
	}
}

// A rebuild whose result differs from the live version (a projector that
// is not deterministic) does not switch.
func TestRebuildVerifyMismatchKeepsServingOldVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &counter{name: "skewed", skew: "proj_skewed_v2"}
	e.appendEvents(t, "s", 5, 200)
	r := e.start(t, nil, c)
	caughtUp(t, e, r.rt)

	_, err := r.rt.RebuildWith(context.Background(), "skewed", projection.RebuildOptions{Verify: true})
	if !errors.Is(err, projection.ErrRebuildMismatch) {
		t.Fatalf("rebuild: %v, want ErrRebuildMismatch", err)
	}
	if v, _ := e.checkpoint(t, "skewed"); v != 1 {
		t.Errorf("version %d after a failed verify, want 1", v)
	}
	st, _ := r.rt.Status(context.Background())
	if st[0].Rebuild != nil {
		t.Errorf("rebuild row left behind: %+v", st[0].Rebuild)
	}
	e.appendEvents(t, "s", 5, 20)
	caughtUp(t, e, r.rt)
	c.skew = ""
	assertExact(t, e.pool, c, nil)
}

// waitNeedsRebuild waits until rt's only runner reports that it waits for
// a rebuild.
func waitNeedsRebuild(t *testing.T, rt *projection.Runtime) {
	t.Helper()
	waitState(t, rt, projection.StateNeedsRebuild, 5*time.Second)
}

// waitState waits until the first runner is in state, for at most
// within.
func waitState(t *testing.T, rt *projection.Runtime, state string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for rt.Health()[0].State != state {
		if time.Now().After(deadline) {
			t.Fatalf("runner state %+v, want %s", rt.Health()[0], state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A projector whose tables changed pauses (serving the old tables) until
// a rebuild creates a version with all of them.
func TestChangedTablesWaitForRebuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 5, 100)
	r := e.start(t, nil, &counter{name: "evolve"})
	caughtUp(t, e, r.rt)
	r.stop()

	c := &counter{name: "evolve", extra: true}
	r2 := e.start(t, nil, c)
	e.appendEvents(t, "s", 5, 10)
	waitNeedsRebuild(t, r2.rt)
	if err := r2.rt.Ready(); err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("Ready: %v, want a needs-rebuild error", err)
	}
	if err := r2.rt.Rebuild(context.Background(), "evolve", nil); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, r2.rt)
	assertExact(t, e.pool, c, nil)
	// The rebuild wakes the paused runner, which resumes well before its
	// own 5-second re-check (the rebuild wrote the checkpoint, so caughtUp
	// does not wait for it).
	waitState(t, r2.rt, projection.StateRunning, 3*time.Second)
	var n int64
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM public.evolve_extra`).Scan(&n); err != nil {
		t.Errorf("new table's view: %v", err)
	}
}

// laidOut is a counter that declares a Layout.
type laidOut struct {
	*counter
	layout string
}

func (l laidOut) Layout() string { return l.layout }

// A projector whose tables keep their names but change what they hold
// (a new Layout) pauses, serving the old tables, until a rebuild makes a
// version of the new layout; the rebuilt version records it, so a restart
// runs at once.
func TestChangedLayoutWaitsForRebuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 5, 100)
	r := e.start(t, nil, &counter{name: "relaid"})
	caughtUp(t, e, r.rt)
	r.stop()

	c := &counter{name: "relaid"}
	r2 := e.start(t, nil, laidOut{c, "values lower-cased"})
	e.appendEvents(t, "s", 5, 10)
	waitNeedsRebuild(t, r2.rt)
	if h := r2.rt.Health()[0]; h.LastError == "" || !strings.Contains(h.LastError, `layout ""`) {
		t.Errorf("health %+v, want an error naming the old layout", h)
	}
	if c.applied.Load() != 0 {
		t.Errorf("the paused projection applied %d events", c.applied.Load())
	}
	if err := r2.rt.Rebuild(context.Background(), "relaid", nil); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, r2.rt)
	assertExact(t, e.pool, c, nil)
	r2.stop()

	r3 := e.start(t, nil, laidOut{&counter{name: "relaid"}, "values lower-cased"})
	e.appendEvents(t, "s", 5, 10)
	caughtUp(t, e, r3.rt)
	if h := r3.rt.Health()[0]; h.State != projection.StateRunning {
		t.Errorf("after a restart on the rebuilt version: %+v", h)
	}
}

func TestRebuildExcludesConcurrentRebuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rt := projection.New(e.pool, e.store, nil, testLogger(), &counter{name: "solo"})
	conn, err := e.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_lock(hashtextextended('cms.projection.rebuild:solo', 0))`); err != nil {
		t.Fatal(err)
	}
	if err := rt.Rebuild(context.Background(), "solo", nil); !errors.Is(err, projection.ErrRebuildRunning) {
		t.Errorf("rebuild while another runs: %v, want ErrRebuildRunning", err)
	}
	if err := rt.Rebuild(context.Background(), "nope", nil); !errors.Is(err, projection.ErrUnknownProjection) {
		t.Errorf("rebuild of an unknown projection: %v", err)
	}
}

// A projection's tables are analyzed as they grow (after 1,000 applied
// events, then 4,000, ...) by the live runner, and a rebuilt version's
// before the switch, so that no session keeps a plan made on empty tables.
func TestTablesAnalyzedAsTheyGrow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &counter{name: "grown"}
	reltuples := func(schema string) float64 {
		t.Helper()
		var n float64
		if err := e.pool.QueryRow(context.Background(), `SELECT reltuples FROM pg_class WHERE oid = $1::regclass`,
			schema+".grown_streams").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	e.appendEvents(t, "a", 5, 999)
	r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, c)
	caughtUp(t, e, r.rt, "grown")
	time.Sleep(50 * time.Millisecond) // an ANALYZE would run in the background
	if n := reltuples("proj_grown_v1"); n != -1 {
		t.Fatalf("after 999 events: reltuples %v, want -1 (never analyzed)", n)
	}
	e.appendEvents(t, "a", 5, 1)
	caughtUp(t, e, r.rt, "grown")
	for deadline := time.Now().Add(10 * time.Second); reltuples("proj_grown_v1") != 5; {
		if time.Now().After(deadline) {
			t.Fatalf("after 1,000 events: reltuples %v, want 5 (analyzed)", reltuples("proj_grown_v1"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.rt.Rebuild(context.Background(), "grown", nil); err != nil {
		t.Fatal(err)
	}
	if n := reltuples("proj_grown_v2"); n != 5 {
		t.Errorf("rebuilt version: reltuples %v, want 5 (analyzed before the switch)", n)
	}
}

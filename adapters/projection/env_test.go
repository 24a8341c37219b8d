package projection_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/operations"
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

// itemPoisoned is an event a counter with refuse may fail on.
type itemPoisoned struct{ ID string }

func (itemPoisoned) EventType() string { return "test.item_poisoned" }

func newRegistry() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(itemCreated{}, 1)
	r.Register(itemBumped{}, 1)
	r.Register(itemPoisoned{}, 1)
	for _, e := range operations.Events() {
		r.Register(e, 1)
	}
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
	extra bool
	// refuse, if set, makes Apply fail on the events it returns an error
	// for (a projector that cannot apply some event).
	refuse  func(e event.Recorded) error
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
		if c.refuse != nil {
			if err := c.refuse(e); err != nil {
				return err
			}
		}
		switch d := e.Data.(type) {
		case itemCreated, itemPoisoned, operations.EventParked, operations.ParkedEventsReplayed:
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
	return `SELECT stream_id, count(*)::bigint, max(stream_version), coalesce(sum(CASE WHEN event_type = 'test.item_bumped' THEN (data->>'By')::bigint END), 0)::bigint
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

package projection_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

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

package projection_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

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

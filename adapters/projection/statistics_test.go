package projection_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

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

package projection_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

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

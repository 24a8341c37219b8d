package projection_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

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

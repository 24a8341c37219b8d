package postgres_test

import (
	"context"
	"testing"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// TestAdvisoryLocks: a key is held by one session at a time (re-entrant
// within it), until released or closed; other keys are independent.
func TestAdvisoryLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	a, b := postgres.NewAdvisoryLocks(pool), postgres.NewAdvisoryLocks(pool)
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	key, other := ids.Generator{}.NewID(), ids.Generator{}.NewID()

	try := func(l *postgres.AdvisoryLocks, key string, want bool) func() {
		t.Helper()
		release, ok, err := l.TryLock(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if ok != want {
			t.Fatalf("TryLock(%s) = %v, want %v", key, ok, want)
		}
		return release
	}
	releaseA := try(a, key, true)
	try(b, key, false)
	releaseAgain := try(a, key, true) // re-entrant within a's session
	try(b, other, true)               // another key
	releaseA()
	releaseA() // a release counts once
	try(b, key, false)
	releaseAgain()
	releaseB := try(b, key, true)
	try(a, key, false)
	releaseB()

	// Close gives every lock of the session back.
	try(b, key, true)
	b.Close()
	try(a, key, true)
	try(a, other, true)
}

func TestAdvisoryLocksCancelledContext(t *testing.T) {
	t.Parallel()
	l := postgres.NewAdvisoryLocks(pgtest.Pool(t))
	t.Cleanup(l.Close)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := l.TryLock(ctx, ids.Generator{}.NewID()); err == nil || ok {
		t.Fatalf("TryLock with a cancelled context: ok %v, err %v", ok, err)
	}
}

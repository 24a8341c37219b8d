package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

// A listener that owns a store fires its appends as they commit, before
// (and without) any NOTIFY: here the listener does not even listen.
func TestOwnedAppendsFireAtCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	l := postgres.NewListener(pool, postgres.NotifyChannel, nil) // never Run
	l.Own(s)
	w, payloads := heard(l, func(p string) bool { return slices.Contains(postgres.NotifiedTypes(p), probe{}.EventType()) })
	c := w.C()
	if _, err := s.Append(ctx, "own-1", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	default:
		t.Fatalf("the append was not fired when it returned; payloads %q", payloads())
	}
}

// The NOTIFY of an owned store's append is not heard again by the
// listener that owns it (its watches fired once, at the commit); another
// store's appends are heard as before, with the same payload.
func TestOwnedNotificationsAreHeardOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	own, other := openStore(t, pool, probeRegistry()), openStore(t, pool, probeRegistry())
	l := listening(t, ctx, pool, postgres.NotifyChannel)
	l.Own(own)
	_, payloads := heard(l, func(string) bool { return true })
	if _, err := own.Append(ctx, "own-2", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the NOTIFY arrives
	want := []string{probe{}.EventType()}
	if got := payloads(); !slices.Equal(got, want) {
		t.Fatalf("an owned append was heard as %q, want once as %q", got, want)
	}
	if _, err := other.Append(ctx, "other-1", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(payloads()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := payloads(); !slices.Equal(got, append(want, want...)) {
		t.Fatalf("payloads %q after another store's append, want %q twice", got, want[0])
	}
}

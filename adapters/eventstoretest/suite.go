// Package eventstoretest is the contract test suite of the event-store
// port: what every implementation promises the commands and projections
// that use it, whatever holds the events. Each implementation (the
// PostgreSQL store, the in-memory one) runs it with Run and a factory that
// gives each subtest fresh, empty storage; what only one of them does
// (notifications, savepoints, statement plans) is tested beside it.
package eventstoretest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/event"
)

// Store is the part of the event-store port the suite exercises.
type Store interface {
	Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error)
	// AppendMulti appends to several streams, all or nothing; appends
	// without events are guards (see event.StreamAppend).
	AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error)
	// AppendHeld holds stream at version while decide runs, then appends
	// what decide returns, all or nothing.
	AppendHeld(ctx context.Context, stream string, version int64,
		decide func(ctx context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error)
	ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error)
	ReadAll(ctx context.Context, after event.Position, limit int) ([]event.Recorded, error)
	// Head is the position of the newest event a reader of the log can
	// see; Last that of the newest committed event, seen or not yet.
	Head(ctx context.Context) (event.Position, error)
	Last(ctx context.Context) (event.Position, error)
	StreamVersion(ctx context.Context, stream string) (int64, error)
}

// Held is an append whose transaction is still open.
type Held struct {
	// Result is what the append reported inside the transaction.
	Result event.AppendResult
	// Commit makes the events visible; Rollback discards them. Calling
	// either after the other is allowed and returns an error.
	Commit   func() error
	Rollback func() error
}

// Harness is one fresh, empty event store under test.
type Harness struct {
	// Store encodes and decodes with the registry given to the factory.
	Store Store
	// Reopen returns another Store over the same storage that encodes and
	// decodes with reg (an older or newer program sharing the storage).
	Reopen func(reg *eventcodec.Registry) Store
	// BeginHeld appends like Store.Append, but inside a transaction that
	// stays open until Commit or Rollback is called on the result.
	BeginHeld func(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (Held, error)
	// Rejected names event data values the store cannot hold (none if it
	// holds whatever the codec encodes). An append of any of them must
	// fail with event.ErrDataRejected and write nothing.
	Rejected map[string]any
}

// Run runs the contract suite. newHarness must return fresh, empty storage
// on every call, with its Store using reg.
func Run(t *testing.T, newHarness func(t *testing.T, reg *eventcodec.Registry) Harness) {
	open := func(t *testing.T) Harness {
		t.Helper()
		h := newHarness(t, NewRegistry())
		if h.Store == nil || h.Reopen == nil || h.BeginHeld == nil {
			t.Fatal("eventstoretest: incomplete harness")
		}
		return h
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, Harness)
	}{
		{"AppendAndRead", testAppendAndRead},
		{"InvalidAppends", testInvalidAppends},
		{"ExpectedVersion", testExpectedVersion},
		{"ConcurrentAppends", testConcurrentAppends},
		{"ConcurrentSmallAppends", testConcurrentSmallAppends},
		{"Idempotency", testIdempotency},
		{"OutOfOrderCommit", testOutOfOrderCommit},
		{"RolledBackTransaction", testRolledBack},
		{"ReadAllBatches", testReadAllBatches},
		{"Upcasting", testUpcasting},
		{"AppendMultiWritesEveryStream", testAppendMultiWritesEveryStream},
		{"AppendMultiAllOrNothing", testAppendMultiAllOrNothing},
		{"AppendMultiRetryIsDuplicate", testAppendMultiRetryIsDuplicate},
		{"AppendMultiSameStreamTwice", testAppendMultiSameStreamTwice},
		{"AppendMultiConcurrentCreates", testAppendMultiConcurrentCreates},
		{"DataRejected", testDataRejected},
		{"Guards", testGuards},
		{"AppendHeld", testAppendHeld},
	} {
		t.Run(c.name, func(t *testing.T) { t.Parallel(); c.test(t, open(t)) })
	}
}

// ---- helpers ----

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func created(name string, n int) event.Event {
	return event.Event{Data: testCreated{Name: name, N: n}, Meta: event.Metadata{EventID: newID()}}
}

// numbered is one event carrying each of ns, with ids left to the store.
func numbered(ns ...int) []event.Event {
	out := make([]event.Event, len(ns))
	for i, n := range ns {
		out[i] = event.Event{Data: testCreated{Name: "numbered", N: n}}
	}
	return out
}

// streamEvents reads a stream's events as (version, N) pairs.
func streamEvents(t *testing.T, s Store, stream string) [][2]int64 {
	t.Helper()
	recs, err := s.ReadStream(ctxFor(t), stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := [][2]int64{}
	for _, r := range recs {
		out = append(out, [2]int64{r.StreamVersion, int64(r.Data.(testCreated).N)})
	}
	return out
}

// last is the position of the newest committed event: a call that wrote
// nothing leaves it where it was.
func last(t *testing.T, s Store) event.Position {
	t.Helper()
	p, err := s.Last(ctxFor(t))
	if err != nil {
		t.Fatalf("Last: %v", err)
	}
	return p
}

// waitVisible waits until a log reader can see position p. Log visibility
// may lag a commit while an older transaction is in flight (one that
// writes to other streams, or, in a store shared with other programs, to
// other storage), so assertions about ReadAll wait for it.
func waitVisible(t *testing.T, s Store, p event.Position) {
	t.Helper()
	ctx := ctxFor(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := s.Head(ctx)
		if err != nil {
			t.Fatalf("Head: %v", err)
		}
		if !h.Less(p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("position %v not visible to log readers after 30s (head %v)", p, h)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readAll follows the log from after to its visible end in batches.
func readAll(t *testing.T, s Store, after event.Position, batch int) []event.Recorded {
	t.Helper()
	ctx := ctxFor(t)
	var out []event.Recorded
	for {
		recs, err := s.ReadAll(ctx, after, batch)
		if err != nil {
			t.Fatalf("ReadAll(%v, %d): %v", after, batch, err)
		}
		if len(recs) > batch {
			t.Fatalf("ReadAll(%v, %d) returned %d events", after, batch, len(recs))
		}
		if len(recs) == 0 {
			return out
		}
		for _, r := range recs {
			if !after.Less(r.Position) {
				t.Fatalf("ReadAll out of order: %v after %v", r.Position, after)
			}
			after = r.Position
		}
		out = append(out, recs...)
	}
}

func streamsOf(recs []event.Recorded) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s@%d", r.StreamID, r.StreamVersion)
	}
	return out
}

func requireConflict(t *testing.T, err error, stream string, expected, actual int64) {
	t.Helper()
	if err == nil {
		t.Fatalf("append to %s at %d: no error, want version conflict", stream, expected)
	}
	if !errors.Is(err, event.ErrVersionConflict) {
		t.Fatalf("append to %s at %d: %v, want ErrVersionConflict", stream, expected, err)
	}
	var ce *event.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("append to %s at %d: %T is not a *event.ConflictError", stream, expected, err)
	}
	if ce.StreamID != stream || ce.Expected != expected || ce.Actual != actual {
		t.Fatalf("conflict = %+v, want stream %s expected %d actual %d", *ce, stream, expected, actual)
	}
}

// requireGuardConflict checks that err is a version conflict on stream
// (a guard that failed; the version found does not matter).
func requireGuardConflict(t *testing.T, what string, err error, stream string) {
	t.Helper()
	var ce *event.ConflictError
	if !errors.As(err, &ce) || ce.StreamID != stream {
		t.Errorf("%s: err = %v, want a version conflict on %s", what, err, stream)
	}
}

func requireVersion(t *testing.T, s Store, stream string, want int64) {
	t.Helper()
	v, err := s.StreamVersion(ctxFor(t), stream)
	if err != nil {
		t.Fatalf("StreamVersion(%s): %v", stream, err)
	}
	if v != want {
		t.Fatalf("StreamVersion(%s) = %d, want %d", stream, v, want)
	}
}

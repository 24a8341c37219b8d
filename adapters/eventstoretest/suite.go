// Package eventstoretest is the contract test suite of the event-store
// port. Any implementation (the PostgreSQL store, a future in-memory one)
// runs it with Run and a factory that gives each subtest fresh, empty
// storage.
package eventstoretest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/event"
)

// Store is the part of the event-store port the suite exercises.
type Store interface {
	Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error)
	ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error)
	ReadAll(ctx context.Context, after event.Position, limit int) ([]event.Recorded, error)
	Head(ctx context.Context) (event.Position, error)
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
	// decodes with reg (an older or newer program sharing the database).
	Reopen func(reg *eventcodec.Registry) Store
	// BeginHeld appends like Store.Append, but inside a transaction that
	// stays open until Commit or Rollback is called on the result.
	BeginHeld func(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (Held, error)
}

// Test event types. The "renamed" type is at schema version 2; version 1
// called the new name Title.

type testCreated struct {
	Name string
	N    int
}

func (testCreated) EventType() string { return "eventstoretest.created" }

type testRenamed struct {
	Name     string
	Previous string
}

func (testRenamed) EventType() string { return "eventstoretest.renamed" }

type testRenamedV1 struct {
	Title    string
	Previous string
}

func (testRenamedV1) EventType() string { return "eventstoretest.renamed" }

func upcastRenamedV1(m map[string]any) (map[string]any, error) {
	title, ok := m["Title"]
	if !ok {
		return nil, errors.New("renamed v1 without Title")
	}
	delete(m, "Title")
	m["Name"] = title
	return m, nil
}

// NewRegistry returns a registry of the suite's event types at their
// current versions. Factories build the store under test with it.
func NewRegistry() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(testCreated{}, 1)
	r.Register(testRenamed{}, 2, upcastRenamedV1)
	return r
}

// registryV1 is the registry of an older program that knew "renamed" at
// schema version 1 only.
func registryV1() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(testCreated{}, 1)
	r.Register(testRenamedV1{}, 1)
	return r
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
	t.Run("AppendAndRead", func(t *testing.T) { t.Parallel(); testAppendAndRead(t, open(t)) })
	t.Run("InvalidAppends", func(t *testing.T) { t.Parallel(); testInvalidAppends(t, open(t)) })
	t.Run("ExpectedVersion", func(t *testing.T) { t.Parallel(); testExpectedVersion(t, open(t)) })
	t.Run("ConcurrentAppends", func(t *testing.T) { t.Parallel(); testConcurrentAppends(t, open(t)) })
	t.Run("Idempotency", func(t *testing.T) { t.Parallel(); testIdempotency(t, open(t)) })
	t.Run("OutOfOrderCommit", func(t *testing.T) { t.Parallel(); testOutOfOrderCommit(t, open(t)) })
	t.Run("RolledBackTransaction", func(t *testing.T) { t.Parallel(); testRolledBack(t, open(t)) })
	t.Run("ReadAllBatches", func(t *testing.T) { t.Parallel(); testReadAllBatches(t, open(t)) })
	t.Run("Upcasting", func(t *testing.T) { t.Parallel(); testUpcasting(t, open(t)) })
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

// waitVisible waits until a log reader can see position p. Log visibility
// may lag a commit while any older transaction is in flight (in PostgreSQL,
// anywhere in the cluster), so assertions about ReadAll wait for it.
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

// ---- subtests ----

func testAppendAndRead(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	stream := event.StreamID("article", "a1")
	meta := func(actor string) event.Metadata {
		return event.Metadata{EventID: newID(), Actor: actor, App: "app-7", CorrelationID: newID(),
			CausationID: newID(), ClientIP: "203.0.113.9"}
	}
	in := []event.Event{
		{Type: "eventstoretest.created", Data: testCreated{Name: "first", N: 1}, Meta: meta("user-1")},
		{Data: testRenamed{Name: "second", Previous: "first"}, Meta: meta("system")},
		{Data: testCreated{Name: "third", N: 3}, Meta: event.Metadata{Actor: "user-2"}}, // id generated
	}
	before := time.Now()
	res, err := s.Append(ctx, stream, event.NoStream, in...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	after := time.Now()
	if res.Version != 3 || res.Duplicate || res.Last.IsZero() {
		t.Fatalf("AppendResult = %+v, want version 3, not duplicate, non-zero position", res)
	}
	recs, err := s.ReadStream(ctx, stream, 0)
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(recs) != len(in) {
		t.Fatalf("ReadStream returned %d events, want %d", len(recs), len(in))
	}
	wantTypes := []string{"eventstoretest.created", "eventstoretest.renamed", "eventstoretest.created"}
	wantSchema := []int{1, 2, 1}
	var prev event.Position
	for i, r := range recs {
		if r.StreamID != stream || r.StreamVersion != int64(i+1) {
			t.Errorf("event %d: stream %s@%d, want %s@%d", i, r.StreamID, r.StreamVersion, stream, i+1)
		}
		if r.Type != wantTypes[i] || r.SchemaVersion != wantSchema[i] {
			t.Errorf("event %d: type %s v%d, want %s v%d", i, r.Type, r.SchemaVersion, wantTypes[i], wantSchema[i])
		}
		if !reflect.DeepEqual(r.Data, in[i].Data) {
			t.Errorf("event %d: data %#v, want %#v", i, r.Data, in[i].Data)
		}
		if i < 2 && r.Meta != in[i].Meta {
			t.Errorf("event %d: metadata %+v, want %+v", i, r.Meta, in[i].Meta)
		}
		if r.RecordedAt.IsZero() || r.RecordedAt.Before(before.Add(-time.Minute)) || r.RecordedAt.After(after.Add(time.Minute)) {
			t.Errorf("event %d: recorded at %v, want around %v", i, r.RecordedAt, before)
		}
		if !prev.Less(r.Position) {
			t.Errorf("event %d: position %v not after %v", i, r.Position, prev)
		}
		prev = r.Position
	}
	if recs[2].Position != res.Last {
		t.Errorf("AppendResult.Last = %v, last event at %v", res.Last, recs[2].Position)
	}
	// A generated event id is a UUIDv7; the rest of the metadata is kept.
	gen := recs[2].Meta
	if u, err := uuid.Parse(gen.EventID); err != nil || u.Version() != 7 {
		t.Errorf("generated event id %q is not a UUIDv7 (%v)", gen.EventID, err)
	}
	if gen.Actor != "user-2" || gen.App != "" || gen.ClientIP != "" {
		t.Errorf("metadata of third event = %+v", gen)
	}

	// Reading after a version.
	tail, err := s.ReadStream(ctx, stream, 1)
	if err != nil {
		t.Fatalf("ReadStream after 1: %v", err)
	}
	if got := streamsOf(tail); !reflect.DeepEqual(got, []string{stream + "@2", stream + "@3"}) {
		t.Errorf("ReadStream after 1 = %v", got)
	}
	if none, err := s.ReadStream(ctx, stream, 3); err != nil || len(none) != 0 {
		t.Errorf("ReadStream after 3 = %d events, %v; want none", len(none), err)
	}
	if none, err := s.ReadStream(ctx, "article-missing", 0); err != nil || len(none) != 0 {
		t.Errorf("ReadStream of a missing stream = %d events, %v; want none, no error", len(none), err)
	}
	requireVersion(t, s, stream, 3)
	requireVersion(t, s, "article-missing", 0)

	// The log holds the same events, decoded the same way.
	waitVisible(t, s, res.Last)
	all := readAll(t, s, event.Position{}, 2)
	if !reflect.DeepEqual(all, recs) {
		t.Errorf("ReadAll = %+v\nReadStream = %+v", all, recs)
	}
	head, err := s.Head(ctx)
	if err != nil || head != res.Last {
		t.Errorf("Head = %v, %v; want %v", head, err, res.Last)
	}
}

func testInvalidAppends(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	type unregistered struct{ X int }
	cases := map[string]func() error{
		"no events": func() error { _, err := s.Append(ctx, "bad-1", event.NoStream); return err },
		"empty stream": func() error {
			_, err := s.Append(ctx, "", event.NoStream, created("x", 1))
			return err
		},
		"unregistered type": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Data: unregistered{1}})
			return err
		},
		"type name mismatch": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Type: "eventstoretest.renamed", Data: testCreated{}})
			return err
		},
		"malformed event id": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Data: testCreated{}, Meta: event.Metadata{EventID: "not-a-uuid"}})
			return err
		},
		"invalid expected version": func() error { _, err := s.Append(ctx, "bad-1", -2, created("x", 1)); return err },
		"valid event after invalid one": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, created("ok", 1), event.Event{Data: unregistered{2}})
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else if errors.Is(err, event.ErrVersionConflict) {
			t.Errorf("%s: reported as a version conflict: %v", name, err)
		}
	}
	requireVersion(t, s, "bad-1", 0)
	if recs, err := s.ReadStream(ctx, "bad-1", 0); err != nil || len(recs) != 0 {
		t.Errorf("rejected appends wrote %d events (%v)", len(recs), err)
	}
}

func testExpectedVersion(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const st = "order-1"
	res, err := s.Append(ctx, st, event.NoStream, created("a", 1), created("b", 2))
	if err != nil || res.Version != 2 {
		t.Fatalf("first append: %+v, %v", res, err)
	}
	rejected := map[string]bool{}
	tryOn := func(stream string, expected int64) error {
		ev := created("rejected", int(expected))
		rejected[ev.Meta.EventID] = true
		_, err := s.Append(ctx, stream, expected, ev)
		return err
	}
	try := func(expected int64) error { return tryOn(st, expected) }
	requireConflict(t, try(event.NoStream), st, event.NoStream, 2)       // stream exists
	requireConflict(t, try(1), st, 1, 2)                                 // stale
	requireConflict(t, try(5), st, 5, 2)                                 // gap: beyond the head
	requireConflict(t, try(3), st, 3, 2)                                 // one beyond the head
	requireConflict(t, tryOn("order-missing", 1), "order-missing", 1, 0) // not yet created
	requireVersion(t, s, "order-missing", 0)

	// The right version appends; so does AnyVersion.
	res, err = s.Append(ctx, st, 2, created("c", 3))
	if err != nil || res.Version != 3 {
		t.Fatalf("append at 2: %+v, %v", res, err)
	}
	res, err = s.Append(ctx, st, event.AnyVersion, created("d", 4), created("e", 5))
	if err != nil || res.Version != 5 {
		t.Fatalf("append at any version: %+v, %v", res, err)
	}
	res, err = s.Append(ctx, "order-2", event.AnyVersion, created("new", 1))
	if err != nil || res.Version != 1 {
		t.Fatalf("append at any version to a new stream: %+v, %v", res, err)
	}
	// And the old version is now stale in turn.
	requireConflict(t, try(2), st, 2, 5)

	recs, err := s.ReadStream(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.StreamVersion != int64(i+1) {
			t.Errorf("event %d at version %d", i, r.StreamVersion)
		}
		if rejected[r.Meta.EventID] {
			t.Errorf("rejected event %s was written", r.Meta.EventID)
		}
		if d := r.Data.(testCreated); d.N != i+1 {
			t.Errorf("version %d holds %+v", i+1, d)
		}
	}
	if len(recs) != 5 {
		t.Fatalf("stream has %d events, want 5", len(recs))
	}
	requireVersion(t, s, st, 5)
}

func testConcurrentAppends(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const writers, rounds, st = 32, 20, "race-1"
	winners := make([]string, rounds)
	for round := 0; round < rounds; round++ {
		expected := int64(round) // round 0: event.NoStream
		type outcome struct {
			id  string
			res event.AppendResult
			err error
		}
		out := make([]outcome, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			ev := created(fmt.Sprintf("r%d-w%d", round, w), round+1)
			out[w].id = ev.Meta.EventID
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[w].res, out[w].err = s.Append(ctx, st, expected, ev)
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, o := range out {
			if o.err == nil {
				wins++
				winners[round] = o.id
				if o.res.Version != expected+1 || o.res.Duplicate {
					t.Errorf("round %d: winner got %+v", round, o.res)
				}
				continue
			}
			var ce *event.ConflictError
			if !errors.As(o.err, &ce) || !errors.Is(o.err, event.ErrVersionConflict) {
				t.Errorf("round %d: loser got %v, want a version conflict", round, o.err)
			} else if ce.Expected != expected || ce.Actual != expected+1 {
				t.Errorf("round %d: conflict %+v, want expected %d actual %d", round, *ce, expected, expected+1)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d appends won, want exactly 1", round, wins)
		}
	}
	recs, err := s.ReadStream(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != rounds {
		t.Fatalf("stream has %d events, want %d: %v", len(recs), rounds, streamsOf(recs))
	}
	for i, r := range recs {
		if r.StreamVersion != int64(i+1) || r.Meta.EventID != winners[i] || r.Data.(testCreated).N != i+1 {
			t.Errorf("version %d: got %s@%d id %s data %+v, want winner %s", i+1, r.StreamID, r.StreamVersion, r.Meta.EventID, r.Data, winners[i])
		}
	}
	requireVersion(t, s, st, rounds)
	waitVisible(t, s, recs[len(recs)-1].Position)
	if all := readAll(t, s, event.Position{}, 7); len(all) != rounds {
		t.Fatalf("log holds %d events, want %d", len(all), rounds)
	}
}

func testIdempotency(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const st = "cart-1"
	batch := []event.Event{created("a", 1), created("b", 2)}
	first, err := s.Append(ctx, st, event.NoStream, batch...)
	if err != nil || first.Duplicate || first.Version != 2 {
		t.Fatalf("first append: %+v, %v", first, err)
	}
	waitVisible(t, s, first.Last)
	logLen := len(readAll(t, s, event.Position{}, 100))
	if logLen != 2 {
		t.Fatalf("log holds %d events after the first append, want 2", logLen)
	}
	unchanged := func(what string) {
		t.Helper()
		requireVersion(t, s, st, 2)
		if n := len(readAll(t, s, event.Position{}, 100)); n != logLen {
			t.Fatalf("%s: log holds %d events, want %d", what, n, logLen)
		}
		if recs, err := s.ReadStream(ctx, st, 0); err != nil || len(recs) != 2 {
			t.Fatalf("%s: stream holds %d events (%v), want 2", what, len(recs), err)
		}
	}
	// A retry is acknowledged whatever expected version it carries: the
	// original one, AnyVersion, or the version the stream has now.
	for _, expected := range []int64{event.NoStream, event.AnyVersion, 2} {
		res, err := s.Append(ctx, st, expected, batch...)
		if err != nil {
			t.Fatalf("retry at %d: %v", expected, err)
		}
		if !res.Duplicate || res.Version != first.Version || res.Last != first.Last {
			t.Fatalf("retry at %d: %+v, want duplicate of %+v", expected, res, first)
		}
		unchanged(fmt.Sprintf("retry at %d", expected))
	}
	// An event id may not be reused in another stream.
	if _, err := s.Append(ctx, "cart-2", event.NoStream, batch[0]); err == nil {
		t.Fatal("event id reused in another stream: no error")
	}
	requireVersion(t, s, "cart-2", 0)
	// Nor mixed with new events in a batch that is not a pure retry.
	if _, err := s.Append(ctx, st, 2, batch[1], created("c", 3)); err == nil {
		t.Fatal("batch mixing a stored and a new event id: no error")
	}
	unchanged("rejected appends")
	// The stream still moves on normally.
	if res, err := s.Append(ctx, st, 2, created("c", 3)); err != nil || res.Version != 3 || res.Duplicate {
		t.Fatalf("append after retries: %+v, %v", res, err)
	}
}

func testOutOfOrderCommit(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	pre, err := s.Append(ctx, "pre-1", event.NoStream, created("p1", 1), created("p2", 2))
	if err != nil {
		t.Fatal(err)
	}
	waitVisible(t, s, pre.Last)
	// A follower that has caught up to here.
	seen := readAll(t, s, event.Position{}, 1)
	if len(seen) != 2 {
		t.Fatalf("log holds %d events, want 2", len(seen))
	}
	checkpoint := seen[1].Position

	// Transaction A appends first, so its events come first in the log,
	// and stays open. B appends after it and commits.
	a, err := h.BeginHeld(ctx, "late-a", event.NoStream, created("a1", 1), created("a2", 2))
	if err != nil {
		t.Fatalf("BeginHeld: %v", err)
	}
	t.Cleanup(func() { _ = a.Rollback() })
	b, err := s.Append(ctx, "early-b", event.NoStream, created("b1", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Result.Last.Less(b.Last) || a.Result.Last.Pos >= b.Last.Pos {
		t.Fatalf("A at %v should precede B at %v (and have a lower global position)", a.Result.Last, b.Last)
	}
	// B is committed: its stream shows it at once.
	if recs, err := s.ReadStream(ctx, "early-b", 0); err != nil || len(recs) != 1 {
		t.Fatalf("ReadStream of committed B: %d events, %v", len(recs), err)
	}
	// But a log reader must not see B while A could still commit below
	// it, or a follower would move past A and never see it.
	for i := 0; i < 5; i++ {
		all := readAll(t, s, event.Position{}, 100)
		if got := streamsOf(all); !reflect.DeepEqual(got, []string{"pre-1@1", "pre-1@2"}) {
			t.Fatalf("while A is open, ReadAll from zero = %v", got)
		}
		if more, err := s.ReadAll(ctx, checkpoint, 100); err != nil || len(more) != 0 {
			t.Fatalf("while A is open, ReadAll from the checkpoint = %v, %v", streamsOf(more), err)
		}
		if head, err := s.Head(ctx); err != nil || head != pre.Last {
			t.Fatalf("while A is open, Head = %v, %v; want %v", head, err, pre.Last)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := a.Commit(); err != nil {
		t.Fatalf("commit A: %v", err)
	}
	waitVisible(t, s, b.Last)
	want := []string{"pre-1@1", "pre-1@2", "late-a@1", "late-a@2", "early-b@1"}
	if got := streamsOf(readAll(t, s, event.Position{}, 1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("after commit, ReadAll from zero = %v, want %v", got, want)
	}
	rest := readAll(t, s, checkpoint, 2)
	if got := streamsOf(rest); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("after commit, the follower reads %v, want %v", got, want[2:])
	}
	if rest[1].Position != a.Result.Last || rest[2].Position != b.Last {
		t.Errorf("positions read %v, %v; appends reported %v, %v", rest[1].Position, rest[2].Position, a.Result.Last, b.Last)
	}
}

func testRolledBack(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	a, err := h.BeginHeld(ctx, "gone-a", event.NoStream, created("a1", 1))
	if err != nil {
		t.Fatalf("BeginHeld: %v", err)
	}
	t.Cleanup(func() { _ = a.Rollback() })
	b, err := s.Append(ctx, "kept-b", event.NoStream, created("b1", 1))
	if err != nil {
		t.Fatal(err)
	}
	if all := readAll(t, s, event.Position{}, 10); len(all) != 0 {
		t.Fatalf("while A is open, ReadAll = %v", streamsOf(all))
	}
	if err := a.Rollback(); err != nil {
		t.Fatalf("rollback A: %v", err)
	}
	waitVisible(t, s, b.Last)
	if got := streamsOf(readAll(t, s, event.Position{}, 10)); !reflect.DeepEqual(got, []string{"kept-b@1"}) {
		t.Fatalf("after rollback, ReadAll = %v", got)
	}
	requireVersion(t, s, "gone-a", 0)
	if res, err := s.Append(ctx, "gone-a", event.NoStream, created("a1 again", 1)); err != nil || res.Version != 1 {
		t.Fatalf("new stream after rollback: %+v, %v", res, err)
	}
}

func testReadAllBatches(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const streams, appendsPerStream, perAppend, batch = 8, 13, 1000, 5000
	const total = streams * appendsPerStream * perAppend
	began := time.Now()
	lasts := make([]event.Position, streams)
	errs := make(chan error, streams)
	var wg sync.WaitGroup
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := fmt.Sprintf("bulk-%02d", i)
			for a := 0; a < appendsPerStream; a++ {
				evs := make([]event.Event, perAppend)
				for j := range evs {
					evs[j] = event.Event{Data: testCreated{Name: st, N: a*perAppend + j + 1}}
				}
				res, err := s.Append(ctx, st, int64(a*perAppend), evs...)
				if err != nil {
					errs <- fmt.Errorf("%s append %d: %w", st, a, err)
					return
				}
				if res.Version != int64((a+1)*perAppend) {
					errs <- fmt.Errorf("%s append %d: version %d", st, a, res.Version)
					return
				}
				lasts[i] = res.Last
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var last event.Position
	for _, p := range lasts {
		if last.Less(p) {
			last = p
		}
	}
	wrote := time.Since(began)
	waitVisible(t, s, last)

	began = time.Now()
	var after event.Position
	ids := make(map[string]bool, total)
	versions := map[string]int64{}
	count, batches := 0, 0
	for {
		recs, err := s.ReadAll(ctx, after, batch)
		if err != nil {
			t.Fatalf("ReadAll after %v: %v", after, err)
		}
		if len(recs) == 0 {
			break
		}
		batches++
		if len(recs) > batch || (len(recs) < batch && count+len(recs) != total) {
			t.Fatalf("batch %d holds %d events after %d read (limit %d, total %d)", batches, len(recs), count, batch, total)
		}
		for _, r := range recs {
			if !after.Less(r.Position) {
				t.Fatalf("event %d at %v does not follow %v", count, r.Position, after)
			}
			after = r.Position
			if ids[r.Meta.EventID] {
				t.Fatalf("event id %s read twice", r.Meta.EventID)
			}
			ids[r.Meta.EventID] = true
			if r.StreamVersion != versions[r.StreamID]+1 {
				t.Fatalf("%s@%d follows version %d", r.StreamID, r.StreamVersion, versions[r.StreamID])
			}
			versions[r.StreamID] = r.StreamVersion
			if d, ok := r.Data.(testCreated); !ok || d.Name != r.StreamID || int64(d.N) != r.StreamVersion {
				t.Fatalf("%s@%d holds %#v", r.StreamID, r.StreamVersion, r.Data)
			}
			count++
		}
	}
	if count != total || len(versions) != streams {
		t.Fatalf("read %d events in %d streams, want %d in %d", count, len(versions), total, streams)
	}
	if after != last {
		t.Fatalf("read up to %v, last append ended at %v", after, last)
	}
	t.Logf("wrote %d events in %v, read them in %d batches in %v", total, wrote, batches, time.Since(began))
}

func testUpcasting(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	old := h.Reopen(registryV1())
	const st = "page-1"
	// An older program writes "renamed" at schema version 1.
	if _, err := old.Append(ctx, st, event.NoStream, event.Event{Data: testRenamedV1{Title: "Old", Previous: "Older"}}); err != nil {
		t.Fatalf("append v1: %v", err)
	}
	res, err := s.Append(ctx, st, 1, event.Event{Data: testRenamed{Name: "New", Previous: "Old"}})
	if err != nil {
		t.Fatalf("append v2: %v", err)
	}
	want := []event.Recorded{
		{StreamID: st, StreamVersion: 1, Type: "eventstoretest.renamed", SchemaVersion: 1, Data: testRenamed{Name: "Old", Previous: "Older"}},
		{StreamID: st, StreamVersion: 2, Type: "eventstoretest.renamed", SchemaVersion: 2, Data: testRenamed{Name: "New", Previous: "Old"}},
	}
	check := func(what string, recs []event.Recorded) {
		t.Helper()
		if len(recs) != len(want) {
			t.Fatalf("%s: %d events, want %d", what, len(recs), len(want))
		}
		for i, r := range recs {
			w := want[i]
			if r.StreamID != w.StreamID || r.StreamVersion != w.StreamVersion || r.Type != w.Type ||
				r.SchemaVersion != w.SchemaVersion || !reflect.DeepEqual(r.Data, w.Data) {
				t.Errorf("%s: event %d = %s@%d %s v%d %#v, want %s@%d %s v%d %#v", what, i,
					r.StreamID, r.StreamVersion, r.Type, r.SchemaVersion, r.Data,
					w.StreamID, w.StreamVersion, w.Type, w.SchemaVersion, w.Data)
			}
		}
	}
	recs, err := s.ReadStream(ctx, st, 0)
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	check("ReadStream", recs)
	waitVisible(t, s, res.Last)
	check("ReadAll", readAll(t, s, event.Position{}, 1))

	// The older program still reads what it knows, and refuses the newer
	// version rather than misread it.
	if recs, err := old.ReadStream(ctx, st, 0); err == nil {
		t.Errorf("a program that knows only v1 read a v2 event without error: %#v", recs)
	}
	if recs, err := old.ReadStream(ctx, st, 1); err == nil {
		t.Errorf("a program that knows only v1 read a v2 event without error: %#v", recs)
	}
	if _, err := old.Append(ctx, "page-2", event.NoStream, event.Event{Data: testRenamedV1{Title: "T"}}); err != nil {
		t.Fatal(err)
	}
	recs, err = old.ReadStream(ctx, "page-2", 0)
	if err != nil || len(recs) != 1 || !reflect.DeepEqual(recs[0].Data, testRenamedV1{Title: "T"}) {
		t.Errorf("v1 reader of a v1 event: %+v, %v", recs, err)
	}
}

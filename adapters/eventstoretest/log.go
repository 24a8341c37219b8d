package eventstoretest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/event"
)

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
		// B is committed all the same: Last, which tells how far a
		// projection must get to have seen every commit, is B's.
		if l, err := s.Last(ctx); err != nil || l != b.Last {
			t.Fatalf("while A is open, Last = %v, %v; want B's %v", l, err, b.Last)
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

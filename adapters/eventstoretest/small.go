package eventstoretest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/halocms/halocms/domain/event"
)

// testConcurrentSmallAppends: many callers making small appends at once
// (a store may write them together, see the PostgreSQL store's group
// commit) each get the result of their own events: the version of their
// stream and the position its last event is stored at. A stale guard
// among them fails only its own call, a retried call is a duplicate, and
// every other call is written once.
func testConcurrentSmallAppends(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	if _, err := s.Append(ctx, "small-guard", event.NoStream, numbered(1, 2)...); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 16, 12
	type call struct {
		stream  string
		version int64
		res     event.AppendResult
		err     error
		stale   bool // guarded on a stale version: must fail
		retry   bool // the events of an earlier call again: a duplicate
	}
	calls := make([][]call, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := fmt.Sprintf("small-%d", w)
			var first event.StreamAppend
			for r := range rounds {
				c := call{stream: own, version: int64(r + 1)}
				switch {
				case r%3 == 0: // a new stream of its own, guarded
					c.stream, c.version = fmt.Sprintf("small-%d-%d", w, r), 1
					a := event.StreamAppend{Stream: c.stream, ExpectedVersion: event.NoStream, Events: []event.Event{created(c.stream, r)}}
					c.stale = r == 6 && w%4 == 0
					guard := event.StreamAppend{Stream: "small-guard", ExpectedVersion: 2}
					if c.stale {
						guard.ExpectedVersion = 1
					}
					if r == 0 {
						first = a
					}
					c.res, c.err = s.AppendMulti(ctx, a, guard)
					if c.stale {
						c.version = 0
					}
				case r == rounds-1: // the first call, retried
					c.stream, c.version, c.retry = first.Stream, 1, true
					c.res, c.err = s.AppendMulti(ctx, first, event.StreamAppend{Stream: "small-guard", ExpectedVersion: 2})
				default: // the writer's own stream, at its version
					v, _ := s.StreamVersion(ctx, own)
					c.version = v + 1
					c.res, c.err = s.Append(ctx, own, v, created(own, r))
				}
				calls[w] = append(calls[w], c)
			}
		}()
	}
	wg.Wait()
	for w, cs := range calls {
		for r, c := range cs {
			what := fmt.Sprintf("writer %d, call %d (%s)", w, r, c.stream)
			switch {
			case c.stale:
				var ce *event.ConflictError
				if !errors.As(c.err, &ce) || ce.StreamID != "small-guard" {
					t.Errorf("%s: stale guard: %v, want a conflict on small-guard", what, c.err)
				}
				if v, _ := s.StreamVersion(ctx, c.stream); v != 0 {
					t.Errorf("%s: a call whose guard failed wrote its stream (version %d)", what, v)
				}
				continue
			case c.err != nil:
				t.Errorf("%s: %v", what, c.err)
				continue
			case c.res.Duplicate != c.retry:
				t.Errorf("%s: duplicate %v, want %v", what, c.res.Duplicate, c.retry)
			}
			if c.res.Version != c.version {
				t.Errorf("%s: version %d, want %d", what, c.res.Version, c.version)
			}
			recs, err := s.ReadStream(ctx, c.stream, c.version-1)
			if err != nil || len(recs) == 0 {
				t.Errorf("%s: read back: %v (%d events)", what, err, len(recs))
				continue
			}
			if got := recs[0]; got.StreamVersion != c.version || got.Position != c.res.Last {
				t.Errorf("%s: stored at %v version %d, the append said %v version %d", what, got.Position, got.StreamVersion, c.res.Last, c.version)
			}
		}
	}
	requireVersion(t, s, "small-guard", 2)
	for w := range writers {
		requireVersion(t, s, fmt.Sprintf("small-%d", w), int64(rounds-1-rounds/3))
	}
}

package eventstoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/halocms/halocms/domain/event"
)

// testGuards: a guard (an append without events) lets the call through
// only while its stream is at the version it expects, whatever the call
// writes (new streams, a stream at its version, any version, one stream).
// A failed call writes nothing, and a retried call is a duplicate even
// when its guard no longer holds.
func testGuards(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	if _, err := s.Append(ctx, "guarded", event.NoStream, numbered(1, 2)...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "other", event.NoStream, numbered(1)...); err != nil {
		t.Fatal(err)
	}
	guard := func(v int64) event.StreamAppend { return event.StreamAppend{Stream: "guarded", ExpectedVersion: v} }
	for name, writes := range map[string][]event.StreamAppend{
		"new streams":        {fresh("new-a", 7), fresh("new-b", 7)},
		"existing stream":    {{Stream: "other", ExpectedVersion: 1, Events: numbered(8)}},
		"any version":        {{Stream: "any", ExpectedVersion: event.AnyVersion, Events: numbered(8)}, fresh("new-d", 7)},
		"one new stream":     {fresh("new-c", 7)},
		"the guard repeated": {fresh("new-e", 7), guard(2)},
	} {
		before := last(t, s)
		_, err := s.AppendMulti(ctx, append(writes, guard(1))...)
		requireGuardConflict(t, name+", stale guard", err, "guarded")
		if after := last(t, s); after != before {
			t.Errorf("%s: a call whose guard failed wrote events (the log ends at %v, was at %v)", name, after, before)
		}
		if _, err := s.AppendMulti(ctx, append(writes, guard(2))...); err != nil {
			t.Errorf("%s, guard that holds: %v", name, err)
		}
	}
	requireVersion(t, s, "guarded", 2) // a guard writes nothing to its stream

	// A retry whose events are stored is a duplicate, whatever its guard.
	retry := event.StreamAppend{Stream: "retried", ExpectedVersion: event.NoStream, Events: []event.Event{created("retried", 9)}}
	if _, err := s.AppendMulti(ctx, retry, guard(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "guarded", 2, numbered(3)...); err != nil {
		t.Fatal(err)
	}
	if res, err := s.AppendMulti(ctx, retry, guard(2)); err != nil || !res.Duplicate {
		t.Errorf("a retried call with a guard now stale: %+v, %v, want a duplicate", res, err)
	}

	for name, bad := range map[string][]event.StreamAppend{
		"guards only":                         {guard(3)},
		"a guard at no version":               {fresh("bad-a", 7), {Stream: "guarded", ExpectedVersion: event.NoStream}},
		"a guard on no stream":                {fresh("bad-b", 7), {ExpectedVersion: 1}},
		"a guard on a stream the call writes": {{Stream: "guarded", ExpectedVersion: 3, Events: numbered(4)}, guard(3)},
	} {
		if _, err := s.AppendMulti(ctx, bad...); err == nil || errors.Is(err, event.ErrVersionConflict) {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		}
	}
}

// testAppendHeld: AppendHeld holds its stream while it decides; an append
// guarded on the stream fails meanwhile, other appends commit and readers
// of the log see them (the hold holds back no reader), and what the
// decision returns is written, all or nothing, with the version of the
// last stream written. A stale version is a conflict before the decision
// runs; a decision's error is returned as it is, and nothing is written.
func testAppendHeld(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	if _, err := s.Append(ctx, "module", event.NoStream, numbered(1)...); err != nil {
		t.Fatal(err)
	}
	guarded := func(stream string, v int64) []event.StreamAppend {
		return []event.StreamAppend{fresh(stream, 2), {Stream: "module", ExpectedVersion: v}}
	}
	res, err := s.AppendHeld(ctx, "module", 1, func(ctx context.Context) ([]event.StreamAppend, error) {
		_, err := s.AppendMulti(ctx, guarded("item-during", 1)...)
		requireGuardConflict(t, "an append guarded on the held stream", err, "module")
		elsewhere, err := s.Append(ctx, "elsewhere", event.NoStream, numbered(3)...)
		if err != nil {
			return nil, err
		}
		waitVisible(t, s, elsewhere.Last)
		return []event.StreamAppend{{Stream: "module", ExpectedVersion: 1, Events: numbered(3)}, fresh("reservation", 4)}, nil
	})
	if err != nil || res.Version != 1 {
		t.Fatalf("AppendHeld: %+v, %v", res, err)
	}
	for stream, want := range map[string]int64{"module": 2, "reservation": 1, "item-during": 0, "elsewhere": 1} {
		requireVersion(t, s, stream, want)
	}
	// The hold is released: a guard on the stream goes through again.
	if _, err := s.AppendMulti(ctx, guarded("item-after", 2)...); err != nil {
		t.Errorf("an append guarded on the stream after the hold: %v", err)
	}

	called := false
	_, err = s.AppendHeld(ctx, "module", 1, func(context.Context) ([]event.StreamAppend, error) {
		called = true
		return nil, nil
	})
	requireGuardConflict(t, "AppendHeld at a stale version", err, "module")
	if _, err := s.AppendHeld(ctx, "nothing", 0, func(context.Context) ([]event.StreamAppend, error) {
		called = true
		return nil, nil
	}); err == nil {
		t.Error("AppendHeld of a stream at version 0: no error")
	}
	if called {
		t.Error("AppendHeld decided where it could not hold")
	}
	refused := errors.New("refused")
	before := last(t, s)
	_, err = s.AppendHeld(ctx, "module", 2, func(ctx context.Context) ([]event.StreamAppend, error) {
		return []event.StreamAppend{{Stream: "module", ExpectedVersion: 2, Events: numbered(6)}}, refused
	})
	if err != refused { //nolint:errorlint // returned as it is
		t.Errorf("a decision's error came back as %v", err)
	}
	if after := last(t, s); after != before {
		t.Errorf("a refused decision wrote events (the log ends at %v, was at %v)", after, before)
	}
}

package eventstoretest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/halocms/halocms/domain/event"
)

// fresh is an append of one event to a new stream.
func fresh(stream string, n int) event.StreamAppend {
	return event.StreamAppend{Stream: stream, ExpectedVersion: event.NoStream, Events: numbered(n)}
}

// testAppendMultiWritesEveryStream: AppendMulti writes new streams and
// streams at an exact version together, stream by stream in the order
// given, and reports the last position and the highest version.
func testAppendMultiWritesEveryStream(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	pre, err := s.Append(ctx, "multi-old", event.NoStream, numbered(1, 2)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.AppendMulti(ctx,
		event.StreamAppend{Stream: "multi-a", ExpectedVersion: event.NoStream, Events: numbered(10, 11)},
		event.StreamAppend{Stream: "multi-old", ExpectedVersion: 2, Events: numbered(3)},
		event.StreamAppend{Stream: "multi-b", ExpectedVersion: event.NoStream, Events: numbered(20)},
	)
	if err != nil || res.Duplicate {
		t.Fatalf("AppendMulti: %+v, %v", res, err)
	}
	for stream, want := range map[string][][2]int64{
		"multi-a":   {{1, 10}, {2, 11}},
		"multi-old": {{1, 1}, {2, 2}, {3, 3}},
		"multi-b":   {{1, 20}},
	} {
		if got := streamEvents(t, s, stream); !reflect.DeepEqual(got, want) {
			t.Errorf("stream %s: (version, N) = %v, want %v", stream, got, want)
		}
	}
	for stream, want := range map[string]int64{"multi-a": 2, "multi-old": 3, "multi-b": 1} {
		requireVersion(t, s, stream, want)
	}
	// The events of one call are in the log in the order given, and Last
	// is the newest of them.
	waitVisible(t, s, res.Last)
	written := readAll(t, s, pre.Last, 100)
	var order []int
	for _, r := range written {
		order = append(order, r.Data.(testCreated).N)
	}
	if want := []int{10, 11, 3, 20}; !reflect.DeepEqual(order, want) {
		t.Errorf("log order %v, want %v", order, want)
	}
	if len(written) == 0 || res.Last != written[len(written)-1].Position || res.Version != 3 {
		t.Errorf("result %+v, want Last at the call's last event and Version 3", res)
	}
}

// testAppendMultiAllOrNothing: one stream that cannot be appended to fails
// the whole call with its conflict, and nothing of the other streams is
// written.
func testAppendMultiAllOrNothing(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	if _, err := s.Append(ctx, "aon-taken", event.NoStream, numbered(1, 2)...); err != nil {
		t.Fatal(err)
	}
	before := last(t, s)
	for _, tc := range []struct {
		name     string
		expected int64
	}{
		{"new stream exists", event.NoStream},
		{"stale version", 1},
		{"version ahead", 5},
	} {
		bad := event.StreamAppend{Stream: "aon-taken", ExpectedVersion: tc.expected, Events: numbered(3)}
		_, err := s.AppendMulti(ctx, fresh("aon-x-"+tc.name, 7), bad, fresh("aon-y-"+tc.name, 7))
		requireConflict(t, err, "aon-taken", tc.expected, 2)
	}
	if after := last(t, s); after != before {
		t.Errorf("the log ends at %v after failed calls, want %v (they write nothing)", after, before)
	}
	// An event id already used by another stream fails the call too.
	used := created("used", 9)
	if _, err := s.Append(ctx, "aon-ids", event.NoStream, used); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMulti(ctx, fresh("aon-z", 7), event.StreamAppend{Stream: "aon-other", ExpectedVersion: event.NoStream, Events: []event.Event{used}}); err == nil {
		t.Error("AppendMulti reusing another stream's event id: no error")
	}
	requireVersion(t, s, "aon-z", 0)
}

// testAppendMultiRetryIsDuplicate: a retried AppendMulti (every event id
// stored already) is acknowledged as a duplicate and writes nothing.
func testAppendMultiRetryIsDuplicate(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	appends := []event.StreamAppend{
		{Stream: "retry-a", ExpectedVersion: event.NoStream, Events: []event.Event{created("a", 1), created("b", 2)}},
		{Stream: "retry-b", ExpectedVersion: event.NoStream, Events: []event.Event{created("c", 3)}},
	}
	first, err := s.AppendMulti(ctx, appends...)
	if err != nil || first.Duplicate {
		t.Fatalf("AppendMulti: %+v, %v", first, err)
	}
	again, err := s.AppendMulti(ctx, appends...)
	if err != nil || !again.Duplicate || again.Last != first.Last {
		t.Fatalf("retry: %+v, %v; want a duplicate at %v", again, err, first.Last)
	}
	if l := last(t, s); l != first.Last {
		t.Fatalf("the log ends at %v after the retry, want %v", l, first.Last)
	}
	waitVisible(t, s, first.Last)
	if n := len(readAll(t, s, event.Position{}, 100)); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}

// testAppendMultiSameStreamTwice: the same stream twice in one call; the
// second part follows the first.
func testAppendMultiSameStreamTwice(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	res, err := s.AppendMulti(ctx,
		event.StreamAppend{Stream: "twice", ExpectedVersion: event.NoStream, Events: numbered(1)},
		event.StreamAppend{Stream: "twice-other", ExpectedVersion: event.NoStream, Events: numbered(5)},
		event.StreamAppend{Stream: "twice", ExpectedVersion: 1, Events: numbered(2)},
	)
	if err != nil || res.Version != 2 {
		t.Fatalf("AppendMulti: %+v, %v", res, err)
	}
	if got, want := streamEvents(t, s, "twice"), [][2]int64{{1, 1}, {2, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("stream twice: %v, want %v", got, want)
	}
}

// testAppendMultiConcurrentCreates: concurrent calls creating the same
// streams; exactly one wins each stream, and every loser fails whole with
// a conflict.
func testAppendMultiConcurrentCreates(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const callers, streams = 6, 50
	errs := make(chan error, callers)
	for c := range callers {
		go func() {
			appends := make([]event.StreamAppend, streams)
			for i := range appends {
				appends[i] = fresh(fmt.Sprintf("race-%d", i), c)
			}
			_, err := s.AppendMulti(ctx, appends...)
			errs <- err
		}()
	}
	wins := 0
	for range callers {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, event.ErrVersionConflict):
			t.Errorf("losing call: %v, want a version conflict", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d calls succeeded, want exactly 1", wins)
	}
	waitVisible(t, s, last(t, s))
	all := readAll(t, s, event.Position{}, 100)
	if len(all) != streams {
		t.Errorf("%d events stored, want %d (one per stream)", len(all), streams)
	}
	owners := map[int]bool{}
	for _, r := range all {
		owners[r.Data.(testCreated).N] = true
	}
	if len(owners) != 1 {
		t.Errorf("events written by %d callers, want 1", len(owners))
	}
}

// testDataRejected: data the store cannot hold is reported as
// event.ErrDataRejected, not as a conflict, whichever way it is appended,
// and nothing is written: callers may then retry the other streams of a
// multi-stream append on their own.
func testDataRejected(t *testing.T, h Harness) {
	if len(h.Rejected) == 0 {
		t.Skip("the store holds whatever the codec encodes")
	}
	s, ctx := h.Store, ctxFor(t)
	for name, v := range h.Rejected {
		bad := event.Event{Data: testBlob{v}}
		check := func(how string, err error) {
			t.Helper()
			if !errors.Is(err, event.ErrDataRejected) || errors.Is(err, event.ErrVersionConflict) {
				t.Errorf("%s, %s: err = %v, want event.ErrDataRejected", name, how, err)
			}
		}
		_, err := s.Append(ctx, "rej-"+name, event.NoStream, bad)
		check("Append", err)
		_, err = s.AppendMulti(ctx, fresh("rej-x-"+name, 1), event.StreamAppend{Stream: "rej-" + name, ExpectedVersion: event.NoStream,
			Events: []event.Event{bad}}, fresh("rej-y-"+name, 1))
		check("AppendMulti", err)
	}
	if l := last(t, s); !l.IsZero() {
		t.Errorf("the log ends at %v, want it empty", l)
	}
}

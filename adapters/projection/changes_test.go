package projection_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
)

// announcing is a counter whose batches announce the streams they touch,
// or all when one of them is an "all-…" stream.
type announcing struct{ *counter }

func (a announcing) Changed(evs []event.Recorded) ([]string, bool) {
	var keys []string
	for _, e := range evs {
		if strings.HasPrefix(e.StreamID, "all-") {
			return nil, true
		}
		if !slices.Contains(keys, e.StreamID) {
			keys = append(keys, e.StreamID)
		}
	}
	return keys, false
}

// changeLog records changes as they are handed over.
type changeLog struct {
	mu  sync.Mutex
	all []projection.Change
}

func (l *changeLog) add(c projection.Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, c)
}

// has tells whether a change of projection names every key (or all, when
// keys is nil).
func (l *changeLog) has(projection string, keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for _, c := range l.all {
		if c.Projection != projection {
			continue
		}
		if c.All {
			if keys == nil {
				return true
			}
			continue
		}
		for _, k := range c.Keys {
			seen[k] = true
		}
	}
	if keys == nil {
		return false
	}
	for _, k := range keys {
		if !seen[k] {
			return false
		}
	}
	return true
}

func (l *changeLog) within(t *testing.T, d time.Duration, projection string, keys ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !l.has(projection, keys...) {
		if time.Now().After(deadline) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no change of %s %v heard within %s: %+v", projection, keys, d, l.all)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChangesAnnounced: what an Announcer's batch changed reaches the
// OnChange of every process that runs it (at once in the one that applied
// the batch, when heard in the others) before a read-your-writes wait for
// the batch is over in that process; a rebuild's switch (in a process of
// its own) changes all.
func TestChangesAnnounced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Two processes run the projection: each batch is applied by either.
	var logs [2]changeLog
	var rts [2]*projection.Runtime
	for i := range rts {
		// A wide bound: other tests' transactions, anywhere in the
		// cluster, can hide new events from the runners for seconds.
		rts[i] = openEnv(t, e.url).start(t, func(o *projection.Options) { o.OnChange, o.WaitTimeout = logs[i].add, time.Minute },
			announcing{&counter{name: "ann"}}).rt
		for deadline := time.Now().Add(10 * time.Second); !rts[i].Hearing(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the runtime does not hear the announcements")
			}
		}
		// What was announced before it listened was not heard: a change
		// of anything.
		logs[i].within(t, 10*time.Second, "")
	}
	for i := range 40 {
		key := fmt.Sprintf("k%d", i)
		pos := e.appendEvents(t, key, 1, 1+i%3)
		for p, rt := range rts {
			if !rt.WaitFor(ctx, pos, "ann") {
				t.Fatalf("WaitFor(%s) = false", pos)
			}
			if !logs[p].has("ann", key+"-0") {
				t.Fatalf("round %d: a wait in process %d was over before it had the change: %+v", i, p, logs[p].all)
			}
		}
	}

	pos := e.appendEvents(t, "all", 1, 1)
	for p, rt := range rts {
		if !rt.WaitFor(ctx, pos, "ann") || !logs[p].has("ann") {
			t.Fatalf("process %d after a batch that changes all: %+v", p, logs[p].all)
		}
	}

	for i := range logs {
		logs[i].mu.Lock()
		logs[i].all = nil
		logs[i].mu.Unlock()
	}
	e2 := openEnv(t, e.url)
	rebuilder := projection.New(e2.pool, e2.store, nil, testLogger(), announcing{&counter{name: "ann"}})
	if _, err := rebuilder.RebuildWith(ctx, "ann", projection.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range logs {
		logs[i].within(t, 10*time.Second, "ann")
	}
}

// TestUnannouncedBatches: batches applied by a process that does not
// announce them (an older version, during an upgrade) do not hold a
// read-your-writes wait until its timeout: once the checkpoint has stood
// ahead of what was heard for a while, everything kept is dropped and the
// batches count as heard.
func TestUnannouncedBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var log changeLog
	// This process announces, but never applies a batch: the other one
	// (which does not announce) applies them all.
	here := openEnv(t, e.url).start(t, func(o *projection.Options) {
		o.OnChange, o.WaitTimeout = log.add, 20*time.Second
	}, announcing{&counter{name: "mix", mid: func(context.Context, string, int) error { return errors.New("not here") }}}).rt
	openEnv(t, e.url).start(t, nil, &counter{name: "mix"})
	for deadline := time.Now().Add(10 * time.Second); !here.Hearing(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the runtime does not hear the announcements")
		}
	}
	pos := e.appendEvents(t, "s", 1, 1)
	start := time.Now()
	if !here.WaitFor(ctx, pos, "mix") {
		t.Fatalf("WaitFor(%s) = false", pos)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the wait took %s", took)
	}
	if !log.has("mix") {
		t.Fatalf("the unannounced batch did not drop what was kept: %+v", log.all)
	}
}

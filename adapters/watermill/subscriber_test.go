package watermill

import (
	"context"
	"slices"
	"testing"
	"time"

	wm "github.com/ThreeDotsLabs/watermill"
)

// After a wake-up that found nothing readable, the subscriber looks again
// after FastPoll, then twice as long each time up to MaxFastPoll, and
// keeps that pace until it reads something, however long Idle is; with a
// short Idle, the fast polls end when they would be as slow as it.
func TestBackoffAfterAFruitlessWakeUp(t *testing.T) {
	t.Parallel()
	logger := wm.NopLogger{}
	for _, c := range []struct {
		name      string
		idle      time.Duration
		wantSteps []time.Duration // b.step (ms) after each fruitless poll
	}{
		{"long idle", time.Hour, []time.Duration{1, 2, 4, 8, 8, 8, 8}},
		{"short idle", 6 * time.Millisecond, []time.Duration{1, 2, 4, 0}},
	} {
		b := NewBackoff(context.Background(), func() <-chan struct{} { return nil }) // never fires
		b.Idle, b.FastPoll, b.MaxFastPoll = c.idle, time.Millisecond, 8*time.Millisecond
		b.HandleError(logger, false, nil) // read something: no longer hot
		if b.hot || b.step != 0 || b.Starved() {
			t.Fatalf("%s: polling fast after a read", c.name)
		}
		woken := make(chan struct{})
		close(woken)
		b.next = woken                   // a notification arrives during the next query
		b.HandleError(logger, true, nil) // which finds nothing: woken, hot from now on
		if !b.hot || b.step != 0 {
			t.Fatalf("%s: not polling fast after a wake-up", c.name)
		}
		var steps []time.Duration
		for range c.wantSteps {
			b.HandleError(logger, true, nil)
			steps = append(steps, b.step/time.Millisecond)
		}
		if !slices.Equal(steps, c.wantSteps) {
			t.Errorf("%s: steps (ms) %v, want %v", c.name, steps, c.wantSteps)
		}
		if c.idle == time.Hour && !b.Starved() {
			t.Errorf("%s: not starved while nothing was read", c.name)
		}
		b.HandleError(logger, false, nil) // read something
		if b.hot || b.step != 0 || b.Starved() {
			t.Errorf("%s: still polling fast after a read", c.name)
		}
	}
}

// The notifications announcing what the log holds may have come before
// the subscriber took its first wake-up channel: if an open transaction
// hides those events from its first query, it must look again soon, not
// after Idle. (CI once waited a minute for the first event with an hour's
// Idle.)
func TestBackoffFirstQueryCountsAsWoken(t *testing.T) {
	t.Parallel()
	// A failure ends the hour's wait with the context instead of hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := NewBackoff(ctx, func() <-chan struct{} { return nil }) // never fires
	b.Idle, b.FastPoll = time.Hour, time.Millisecond
	b.HandleError(wm.NopLogger{}, true, nil) // the first query finds nothing
	if !b.Starved() || b.step != time.Millisecond {
		t.Fatalf("after a fruitless first query: wait %v (starved %v), want FastPoll", b.step, b.Starved())
	}
	polling := NewBackoff(context.Background(), nil) // no wake source: plain polling
	if polling.hot || polling.Starved() {
		t.Error("a subscriber without a wake source starts hot")
	}
}

// A notification that arrives while a query reads a batch may announce
// events that query did not see; if an open transaction hides them from
// the next query too, the subscriber must look again soon, not after
// Idle. (CI once waited a minute for such events with an hour's Idle.)
func TestBackoffWokenDuringAFruitfulQuery(t *testing.T) {
	t.Parallel()
	logger := wm.NopLogger{}
	for _, fruitful := range []bool{true, false} {
		b := NewBackoff(context.Background(), func() <-chan struct{} { return nil }) // never fires
		b.Idle, b.FastPoll = time.Hour, time.Millisecond
		b.HandleError(logger, false, nil) // read something: no longer hot
		woken := make(chan struct{})
		close(woken)
		b.next = woken // the notification arrives while the next query runs
		if fruitful {
			b.HandleError(logger, false, nil) // the query read a batch
		} else {
			b.HandleError(logger, true, nil) // it found nothing: the wait ends at once
		}
		if !b.hot || !b.Starved() {
			t.Fatalf("fruitful=%v: the wake-up during the query was dropped (hot %v, starved %v)", fruitful, b.hot, b.Starved())
		}
		b.HandleError(logger, true, nil) // the next query finds nothing: poll fast
		if b.step != time.Millisecond {
			t.Fatalf("fruitful=%v: the fruitless query after the wake-up waited %v, want FastPoll", fruitful, b.step)
		}
	}
}

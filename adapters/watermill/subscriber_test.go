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

// A query that finds nothing while the subscriber was not woken asks
// Pending whether events wait past its checkpoint (their notification may
// have come before the subscriber listened, or been merged with another,
// and an open transaction hide them): if so it polls fast, as after a
// wake-up; if not it waits for a notification. (CI once waited a minute
// for the first event with an hour's Idle.)
func TestBackoffPending(t *testing.T) {
	t.Parallel()
	for _, waiting := range []bool{true, false} {
		// A failure ends the hour's wait with the context instead of hanging.
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		asked := 0
		b := NewBackoff(ctx, func() <-chan struct{} { return nil }) // never fires
		b.Idle, b.FastPoll = time.Hour, time.Millisecond
		b.Pending = func(context.Context) bool { asked++; return waiting }
		b.HandleError(wm.NopLogger{}, false, nil) // read something: not asked
		b.HandleError(wm.NopLogger{}, true, nil)  // found nothing: asked
		switch {
		case asked != 1:
			t.Errorf("waiting=%v: Pending asked %d times, want once", waiting, asked)
		case waiting && (!b.Starved() || b.step != time.Millisecond):
			t.Errorf("waiting=%v: wait %v (starved %v), want FastPoll", waiting, b.step, b.Starved())
		case !waiting && (b.hot || b.Starved()):
			t.Errorf("waiting=%v: polling fast with nothing waiting", waiting)
		}
		if waiting {
			b.HandleError(wm.NopLogger{}, true, nil) // polling fast: not asked again
			if asked != 1 || b.step != 2*time.Millisecond {
				t.Errorf("while polling fast: asked %d times, wait %v", asked, b.step)
			}
		}
		cancel()
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

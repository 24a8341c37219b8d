package watermill

import (
	"context"
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
		wantSteps []time.Duration // b.step after each fruitless poll
	}{
		{"long idle", time.Hour, []time.Duration{0, 1, 2, 4, 8, 8, 8, 8}},
		{"short idle", 6 * time.Millisecond, []time.Duration{0, 1, 2, 4, 0}},
	} {
		woken := make(chan struct{})
		close(woken)
		calls := 0
		b := NewBackoff(context.Background(), func() <-chan struct{} {
			calls++
			if calls == 1 { // taken before the first query: a notification arrives
				return woken
			}
			return nil // none after it (nil blocks: only the timer ends a wait)
		})
		b.Idle, b.FastPoll, b.MaxFastPoll = c.idle, time.Millisecond, 8*time.Millisecond
		var steps []time.Duration
		b.HandleError(logger, true, nil) // woken: hot from now on
		if !b.hot {
			t.Fatalf("%s: not polling fast after a wake-up", c.name)
		}
		steps = append(steps, b.step)
		for range len(c.wantSteps) - 1 {
			b.HandleError(logger, true, nil)
			steps = append(steps, b.step/time.Millisecond)
		}
		for i, want := range c.wantSteps {
			if steps[i] != want {
				t.Errorf("%s: steps (ms) %v, want %v", c.name, steps, c.wantSteps)
				break
			}
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

// A notification that arrives while a query reads a batch may announce
// events that query did not see; if an open transaction hides them from
// the next query too, the subscriber must look again soon, not after
// Idle. (CI once waited a minute for such events with an hour's Idle.)
func TestBackoffWokenDuringAFruitfulQuery(t *testing.T) {
	t.Parallel()
	logger := wm.NopLogger{}
	for _, fruitful := range []bool{true, false} {
		woken := make(chan struct{})
		calls := 0
		b := NewBackoff(context.Background(), func() <-chan struct{} {
			calls++
			if calls == 1 { // taken before the query
				return woken
			}
			return nil
		})
		b.Idle, b.FastPoll = time.Hour, time.Millisecond
		close(woken) // the notification arrives while the query runs
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

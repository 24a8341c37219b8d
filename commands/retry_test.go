package commands_test

import (
	"context"
	"errors"
	"testing"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/event"
)

func conflictOn(stream string) error { return &event.ConflictError{StreamID: stream} }

func TestRetry(t *testing.T) {
	other := errors.New("boom")
	cases := []struct {
		name  string
		rule  commands.Retry
		errs  func(attempt int) error // what attempt n returns
		calls int
		want  error
	}{
		{"success at once", commands.Retry{}, func(int) error { return nil }, 1, nil},
		{"other errors are not retried", commands.Retry{}, func(int) error { return other }, 1, other},
		{"a conflict, then success", commands.Retry{}, func(n int) error {
			if n < 3 {
				return conflictOn("s")
			}
			return nil
		}, 3, nil},
		{"conflicts up to MaxAttempts", commands.Retry{}, func(int) error { return conflictOn("s") }, commands.MaxAttempts, event.ErrVersionConflict},
		{"conflicts up to Attempts", commands.Retry{Attempts: 3}, func(int) error { return conflictOn("s") }, 3, event.ErrVersionConflict},
		{"held past Attempts", commands.Retry{Attempts: 2, Held: func(err error) bool {
			var ce *event.ConflictError
			return errors.As(err, &ce) && ce.StreamID == "held"
		}}, func(n int) error {
			if n < 5 {
				return conflictOn("held")
			}
			return conflictOn("s")
		}, 5, event.ErrVersionConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := c.rule.Run(context.Background(), func(attempt int) error {
				calls++
				if attempt != calls {
					t.Fatalf("attempt %d on call %d", attempt, calls)
				}
				return c.errs(attempt)
			})
			if calls != c.calls || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("%d calls, err %v; want %d calls, err %v", calls, err, c.calls, c.want)
			}
		})
	}
}

// TestRetryHeldStopsWithContext: a rule that retries for a while stops
// as soon as its caller's context ends, with the conflict.
func TestRetryHeldStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := commands.Retry{Held: func(error) bool { return true }}.Run(ctx, func(int) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return conflictOn("held")
	})
	if calls != 2 || !errors.Is(err, event.ErrVersionConflict) {
		t.Fatalf("%d calls, err %v; want 2 calls and the conflict", calls, err)
	}
}

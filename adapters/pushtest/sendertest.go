// Package pushtest is the contract every push sender (the dispatcher's
// Sender port) meets. Each sender adapter runs it from its tests, against
// a fake provider it controls.
package pushtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/push"
)

// Sender is the port under test: one message per call, safe for
// concurrent use.
type Sender interface {
	Send(ctx context.Context, m push.Message) push.Result
}

// Reply is how a fake provider answers every message.
type Reply int

const (
	// Accept: the message is delivered.
	Accept Reply = iota
	// UnknownToken: the device token is unknown or unregistered.
	UnknownToken
	// Throttle: too many requests, with a Retry-After of 7 seconds.
	Throttle
	// Unavailable: the provider is down (503).
	Unavailable
	// BadPayload: the message itself is refused.
	BadPayload
	// Hang: no answer until the request is abandoned.
	Hang
)

func (r Reply) String() string {
	return [...]string{"accept", "unknown token", "throttle", "unavailable", "bad payload", "hang"}[r]
}

// Harness returns a sender whose provider gives reply to every message,
// cleaned up with t.Cleanup; ok false: the sender has no provider that can
// give that reply, and the case is skipped.
type Harness func(t *testing.T, reply Reply) (s Sender, ok bool)

// Message returns a full notification for a device of platform p.
func Message(p push.Platform, token string) push.Message {
	badge := 3
	return push.Message{
		ScheduleID: "sched-1",
		Device:     push.Device{AppUserID: "user-1", Alias: "alias-1", Platform: p, Token: token},
		Notification: push.Notification{
			Title: "Hello", Body: "World", Sound: "default", Badge: &badge,
			Image: &push.Image{URL: "https://cdn.example/x.png", Layout: "expanded"},
			URL:   "app://news/1", Extra: map[string]any{"k": "v"},
		},
	}
}

// Run checks the contract: every reply maps to its outcome on both
// platforms, a cancelled or abandoned request is Retry, and concurrent
// sends are all delivered.
func Run(t *testing.T, h Harness) {
	t.Run("outcomes", func(t *testing.T) {
		cases := []struct {
			reply      Reply
			want       push.Outcome
			retryAfter time.Duration
		}{
			{Accept, push.Delivered, 0},
			{UnknownToken, push.InvalidToken, 0},
			{Throttle, push.Retry, 7 * time.Second},
			{Unavailable, push.Retry, 0},
			{BadPayload, push.Failed, 0},
		}
		for _, c := range cases {
			for _, p := range []push.Platform{push.Android, push.IOS} {
				t.Run(c.reply.String()+"/"+string(p), func(t *testing.T) {
					s, ok := h(t, c.reply)
					if !ok {
						t.Skip("the sender cannot face this reply")
					}
					got := s.Send(context.Background(), Message(p, "device-token-1"))
					if got.Outcome != c.want || got.RetryAfter != c.retryAfter {
						t.Fatalf("Send = %+v, want outcome %v, retry after %v", got, c.want, c.retryAfter)
					}
					if c.want != push.Delivered && got.Reason == "" {
						t.Errorf("a %v result carries no reason", got.Outcome)
					}
				})
			}
		}
	})

	t.Run("cancelled context is retry", func(t *testing.T) {
		s, ok := h(t, Accept)
		if !ok {
			t.Skip("the sender cannot face this reply")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := s.Send(ctx, Message(push.Android, "device-token-1")); got.Outcome != push.Retry {
			t.Fatalf("Send with a cancelled context = %+v, want retry", got)
		}
	})

	t.Run("abandoned request is retry", func(t *testing.T) {
		s, ok := h(t, Hang)
		if !ok {
			t.Skip("the sender cannot face this reply")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		got := s.Send(ctx, Message(push.IOS, "device-token-1"))
		if got.Outcome != push.Retry {
			t.Fatalf("Send to a provider that never answers = %+v, want retry", got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Send returned %v after its context ended", d)
		}
	})

	t.Run("concurrent sends", func(t *testing.T) {
		s, ok := h(t, Accept)
		if !ok {
			t.Skip("the sender cannot face this reply")
		}
		const workers, each = 16, 25
		results := make(chan push.Result, workers*each)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := push.Android
				if w%2 == 1 {
					p = push.IOS
				}
				for range each {
					results <- s.Send(context.Background(), Message(p, "device-token-1"))
				}
			}()
		}
		wg.Wait()
		close(results)
		n := 0
		for r := range results {
			n++
			if r.Outcome != push.Delivered {
				t.Fatalf("concurrent Send = %+v, want delivered", r)
			}
		}
		if n != workers*each {
			t.Fatalf("%d results, want %d", n, workers*each)
		}
	})
}

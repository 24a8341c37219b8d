package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Listener holds one connection in LISTEN on a channel and wakes every
// waiter when a notification arrives. If the connection drops it reconnects,
// and waiters fall back to their own timeouts meanwhile. A connection that
// died without a word (a network path that drops packets, a firewall that
// forgot it) tells nothing to a reader that only waits, so after PingEvery
// without a notification the listener pings the server, and reconnects if
// no answer comes within PingTimeout.
type Listener struct {
	pool    *pgxpool.Pool
	channel string
	log     *slog.Logger

	// PingEvery and PingTimeout (DefaultPingEvery and DefaultPingTimeout
	// if 0): set them before Run.
	PingEvery, PingTimeout time.Duration

	wake      Broadcast
	listening atomic.Bool

	watchMu  sync.Mutex
	watches  []watch
	handlers []func(payload string, all bool)
	own      map[string]bool // origins whose appends are fired locally (see Own)
}

type watch struct {
	match func(payload string) bool
	b     *Broadcast
}

// Watch returns a wake-up source fired by the notifications whose payload
// match accepts, each time the listener starts listening, and each time it
// loses its connection.
func (l *Listener) Watch(match func(payload string) bool) *Broadcast {
	b := &Broadcast{}
	l.watchMu.Lock()
	l.watches = append(l.watches, watch{match: match, b: b})
	l.watchMu.Unlock()
	return b
}

// Handle has fn called with the payload of each notification, in the
// order they arrive (all false), and with all true each time the listener
// starts listening and each time it loses its connection: what was
// notified meanwhile was not heard. fn runs on the listener's goroutine
// and must be quick.
func (l *Listener) Handle(fn func(payload string, all bool)) {
	l.watchMu.Lock()
	l.handlers = append(l.handlers, fn)
	l.watchMu.Unlock()
}

// Own has the appends of store fired here as they commit (see
// EventStore.OnCommitted), without waiting for their NOTIFY: it would come
// a few milliseconds later (the notifier sends at most one every
// notifyEvery, in a transaction of its own), and the listener ignores it.
// The other processes still hear it.
func (l *Listener) Own(store *EventStore) {
	l.watchMu.Lock()
	if l.own == nil {
		l.own = map[string]bool{}
	}
	l.own[store.origin] = true
	l.watchMu.Unlock()
	store.OnCommitted(func(payload string) { l.fire(payload, false) })
}

// heardFrom splits a notification into the origin of the appends it
// announces (see EventStore.notifier; "" for others) and the payload the
// watches see, and reports whether they were fired here already (Own).
func (l *Listener) heardFrom(notification string) (payload string, fired bool) {
	origin, payload := splitOrigin(notification)
	if origin == "" {
		return payload, false
	}
	l.watchMu.Lock()
	defer l.watchMu.Unlock()
	return payload, l.own[origin]
}

// splitOrigin splits "@origin;payload".
func splitOrigin(notification string) (origin, payload string) {
	if rest, ok := strings.CutPrefix(notification, "@"); ok {
		if o, p, ok := strings.Cut(rest, ";"); ok {
			return o, p
		}
	}
	return "", notification
}

// fire wakes the waiters on C and the watches that accept payload (all of
// them when all is set), and calls the handlers.
func (l *Listener) fire(payload string, all bool) {
	l.wake.Fire()
	l.watchMu.Lock()
	defer l.watchMu.Unlock()
	for _, w := range l.watches {
		if all || w.match(payload) {
			w.b.Fire()
		}
	}
	for _, fn := range l.handlers {
		fn(payload, all)
	}
}

// Broadcast wakes every waiter at once: C returns a channel that the next
// Fire closes. The zero value is ready to use.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// C returns a channel closed by the next Fire.
func (b *Broadcast) C() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// Fire wakes everyone holding a channel from C.
func (b *Broadcast) Fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
	}
	b.ch = make(chan struct{})
}

// The listener's defaults: a dead connection is noticed within about 35 s.
// Until then writes that wait for projections wait for the runners' idle
// polls (see cmswm.DefaultIdleWait) instead of a notification.
const (
	DefaultPingEvery   = 30 * time.Second
	DefaultPingTimeout = 5 * time.Second
)

// NewListener returns a listener on channel; call Run to start it.
func NewListener(pool *pgxpool.Pool, channel string, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	return &Listener{pool: pool, channel: channel, log: log}
}

// C returns a channel that is closed at the next notification, each time
// the listener starts listening, and each time it loses its connection.
func (l *Listener) C() <-chan struct{} { return l.wake.C() }

// Listening reports whether the listener holds its LISTEN now: while it
// does not, notifications can be missed.
func (l *Listener) Listening() bool { return l.listening.Load() }

// Wait blocks until a notification, the timeout or the end of ctx.
func (l *Listener) Wait(ctx context.Context, timeout time.Duration) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-l.C():
	case <-t.C:
	case <-ctx.Done():
	}
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := l.listen(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("listener: reconnecting", "channel", l.channel, "err", err)
			l.fire("", true) // let waiters poll while we are deaf
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (l *Listener) listen(ctx context.Context) error {
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+l.channel); err != nil {
		return err
	}
	defer func() {
		// Do not return a listening connection to the pool.
		_ = conn.Conn().Close(context.Background())
	}()
	l.listening.Store(true)
	defer l.listening.Store(false) // before Run fires the wake-up
	// What was notified before the LISTEN took hold was not heard: a
	// waiter that looked before then, and waits for the next notification,
	// must look again now.
	l.fire("", true)
	every, timeout := cmp.Or(l.PingEvery, DefaultPingEvery), cmp.Or(l.PingTimeout, DefaultPingTimeout)
	for {
		wait, cancel := context.WithTimeout(ctx, every)
		n, err := conn.Conn().WaitForNotification(wait)
		quiet := ctx.Err() == nil && errors.Is(wait.Err(), context.DeadlineExceeded) && pgconn.Timeout(err)
		cancel()
		switch {
		case err == nil:
			if payload, fired := l.heardFrom(n.Payload); !fired {
				l.fire(payload, false)
			}
		case quiet:
			// Quiet for a while: is the server still there?
			ping, cancel := context.WithTimeout(ctx, timeout)
			err := conn.Ping(ping)
			cancel()
			if err != nil {
				// Drop the socket now: pgx would wait up to 15 s for
				// the server to close it, and so would the pool's Close.
				_ = conn.Conn().PgConn().Conn().Close()
				return fmt.Errorf("no answer to a ping after %v without a notification: %w", every, err)
			}
		default:
			return err
		}
	}
}

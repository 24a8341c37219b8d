package live

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// ContentPrefix starts the type of every content event.
const ContentPrefix = "content."

// Log is what a Follower reads: the event store.
type Log interface {
	// ReadTail reads the recent events of a type prefix, and where to
	// follow on from (postgres.EventStore.ReadTail).
	ReadTail(ctx context.Context, prefix string, n int) ([]event.Recorded, event.Position, error)
	// ReadAllRaw reads the log in order, undecoded.
	ReadAllRaw(ctx context.Context, q postgres.Querier, after event.Position, limit int) ([]event.Recorded, error)
	// Decode decodes an event ReadAllRaw or ReadTail returned.
	Decode(r event.Recorded) (event.Recorded, error)
}

// Wakes tells which notifications of postgres.NotifyChannel announce
// content events (postgres.Listener.Watch).
func Wakes(payload string) bool {
	types := postgres.NotifiedTypes(payload)
	if types == nil {
		return true
	}
	for _, t := range types {
		if strings.HasPrefix(t, ContentPrefix) {
			return true
		}
	}
	return false
}

// Follower reads the log's content changes, in log order, into a Hub: one
// reader per process, whatever the number of streams.
type Follower struct {
	log  Log
	hub  *Hub
	wake func() <-chan struct{}
	lg   *slog.Logger

	// Tail is how many events back the follower starts reading (default
	// 20000), so that its hub can replay the recent past to clients that
	// reconnect after a restart; Batch is how many events it reads at
	// once (default 500); Idle is how long it waits for a notification
	// before it looks anyway (default 1 s); Gap is the least time between
	// two reads (default 25 ms), so that under a steady stream of writes
	// each read takes what arrived meanwhile, not one event per write.
	Tail, Batch int
	Idle, Gap   time.Duration
}

// NewFollower returns a follower of log into hub, woken by wake (for
// example the Broadcast of postgres.Listener.Watch(Wakes)).
func NewFollower(log Log, hub *Hub, wake func() <-chan struct{}, lg *slog.Logger) *Follower {
	if log == nil || hub == nil || wake == nil {
		panic("live.NewFollower: nil dependency")
	}
	if lg == nil {
		lg = slog.Default()
	}
	return &Follower{log: log, hub: hub, wake: wake, lg: lg, Tail: 20000, Batch: 500, Idle: time.Second, Gap: 25 * time.Millisecond}
}

// Run follows the log until ctx ends.
func (f *Follower) Run(ctx context.Context) {
	pos, ok := f.start(ctx)
	if !ok {
		return
	}
	fast := time.Duration(0) // after a wake-up that found nothing: look again soon
	var last time.Time
	for ctx.Err() == nil {
		woken := f.wake() // before the read: a notification during it is not missed
		if gap := f.Gap - time.Since(last); gap > 0 {
			sleep(ctx, gap)
		}
		last = time.Now()
		evs, err := f.log.ReadAllRaw(ctx, nil, pos, f.Batch)
		if err != nil {
			if ctx.Err() == nil {
				f.lg.Warn("live: reading the log", "err", err)
			}
			sleep(ctx, time.Second)
			continue
		}
		if len(evs) > 0 {
			pos = evs[len(evs)-1].Position
			f.hub.Publish(f.changes(evs)...)
			fast = 0
			if len(evs) == f.Batch {
				continue
			}
		}
		wait := f.Idle
		if fast > 0 {
			wait = fast
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-woken:
			// The events announced may be hidden a while by an older
			// transaction still open: look again soon, then less often.
			fast = 10 * time.Millisecond
		case <-t.C:
			if fast > 0 {
				if fast *= 2; fast >= f.Idle {
					fast = 0
				}
			}
		}
		t.Stop()
	}
}

// start puts the recent changes in the hub and returns where to follow
// on from; false when ctx ended first.
func (f *Follower) start(ctx context.Context) (event.Position, bool) {
	for {
		evs, pos, err := f.log.ReadTail(ctx, ContentPrefix, f.Tail)
		if err == nil {
			f.hub.Publish(f.changes(evs)...)
			return pos, true
		}
		if ctx.Err() != nil {
			return event.Position{}, false
		}
		f.lg.Warn("live: reading the recent log", "err", err)
		sleep(ctx, time.Second)
	}
}

// changes decodes the content events of evs into the changes they make.
func (f *Follower) changes(evs []event.Recorded) []rmcontent.Change {
	var out []rmcontent.Change
	for _, r := range evs {
		if !strings.HasPrefix(r.Type, ContentPrefix) {
			continue
		}
		d, err := f.log.Decode(r)
		if err != nil {
			f.lg.Warn("live: an event that does not decode is not told", "position", r.Pos, "type", r.Type, "err", err)
			continue
		}
		if c, ok := rmcontent.ChangeOf(d); ok {
			out = append(out, c)
		}
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

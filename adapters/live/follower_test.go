package live

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
)

// busyLog is a log that grows by one event between any two reads.
type busyLog struct{ reads atomic.Int64 }

func (l *busyLog) ReadTail(context.Context, string, int) ([]event.Recorded, event.Position, error) {
	return nil, event.Position{}, nil
}

func (l *busyLog) ReadAllRaw(_ context.Context, _ postgres.Querier, after event.Position, _ int) ([]event.Recorded, error) {
	n := l.reads.Add(1)
	return []event.Recorded{{Position: event.Position{TxID: after.TxID + 1, Pos: n}, Type: "appuser.registered"}}, nil
}

func (l *busyLog) Decode(r event.Recorded) (event.Recorded, error) { return r, nil }

// Under a steady stream of writes, each announced at once, the follower
// reads the log at most once per Gap: each read takes what arrived since
// the last one.
func TestFollowerReadsAtMostOncePerGap(t *testing.T) {
	log := &busyLog{}
	woken := make(chan struct{})
	close(woken) // every write announced: always woken
	f := NewFollower(log, NewHub(Config{Keep: 4}), func() <-chan struct{} { return woken }, nil)
	f.Gap = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f.Run(ctx) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	reads, most := log.reads.Load(), int64(time.Since(start)/f.Gap)+1
	if reads < 2 || reads > most {
		t.Errorf("%d reads in %v, want 2 to %d (one per %v)", reads, time.Since(start).Round(time.Millisecond), most, f.Gap)
	}
}

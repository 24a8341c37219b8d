package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

// The load: genUsers users' rights streams, filled by loadWorkers
// concurrent loaders (each owning a share of the users, so its expected
// versions are exact), loadStreamsPerTx streams x loadEventsPerStream
// events per AppendMulti transaction.
const (
	genUsers            = 10_000
	loadWorkers         = 4
	loadStreamsPerTx    = 100
	loadEventsPerStream = 10
	loadEventsPerTx     = loadStreamsPerTx * loadEventsPerStream
)

func loadPhase(ctx context.Context, cfg config, pool *pgxpool.Pool, store *postgres.EventStore, res *results) error {
	progressf("load: %d rights events for %d users over %d apps (AppendMulti, %d streams x %d events per transaction, %d loaders); %d other active sessions on the server",
		cfg.events, genUsers, genApps, loadStreamsPerTx, loadEventsPerStream, loadWorkers, otherSessions(ctx, pool))
	l := &rightsLoad{store: store}
	l.remaining.Store(int64(cfg.events))
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for w := range loadWorkers {
		g.Go(func() error { return l.load(gctx, w) })
	}
	stopProgress := progressLoop(gctx, "load", func() (int64, int64) { return l.done.Load(), int64(cfg.events) })
	err := g.Wait()
	stopProgress()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	took := time.Since(start)
	res.model = modelOf(l.users)
	// ANALYZE, as autovacuum would soon after a load this size: the read
	// and rebuild plans should not depend on when autovacuum wakes up.
	for _, t := range []string{"events", "streams"} {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+t); err != nil {
			return fmt.Errorf("vacuum analyze %s: %w", t, err)
		}
	}
	var size string
	if err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size('events'))`).Scan(&size); err != nil {
		return err
	}
	done, grants := l.done.Load(), l.grants.Load()
	res.add(figure{name: "load: AppendMulti bulk", value: rate(done, took), unit: "events/s",
		detail: fmt.Sprintf("%d events (%d grants, %d revokes) in %.1fs, %d per transaction; events table now %s (with indexes)",
			done, grants, done-grants, took.Seconds(), loadEventsPerTx, size)})
	return nil
}

// rightsLoad is what the loaders share: the events left to claim, the
// events and grants appended, and the users they made.
type rightsLoad struct {
	store     *postgres.EventStore
	remaining atomic.Int64
	done      atomic.Int64
	grants    atomic.Int64
	mu        sync.Mutex
	users     []*genUser
}

// claim takes up to a transaction's worth of the events left; 0 when
// none are.
func (l *rightsLoad) claim() int {
	for {
		r := l.remaining.Load()
		if r <= 0 {
			return 0
		}
		n := min(r, loadEventsPerTx)
		if l.remaining.CompareAndSwap(r, r-n) {
			return int(n)
		}
	}
}

// load is loader w: it makes its share of the users, then appends
// batches of their events until none are left to claim.
func (l *rightsLoad) load(ctx context.Context, w int) error {
	ld := &loader{r: rand.New(rand.NewPCG(uint64(w), 3))}
	for u := w; u < genUsers; u += loadWorkers {
		ld.users = append(ld.users, newGenUser(ld.r, fmt.Sprintf("user-%05d", u)))
	}
	l.mu.Lock()
	l.users = append(l.users, ld.users...)
	l.mu.Unlock()
	ld.next = len(ld.users)
	for {
		n := l.claim()
		if n == 0 {
			return nil
		}
		appends, touched := ld.batch(n, &l.grants)
		if _, err := l.store.AppendMulti(ctx, appends...); err != nil {
			return err
		}
		for i, u := range touched {
			u.version += int64(len(appends[i].Events))
			l.done.Add(int64(len(appends[i].Events)))
		}
	}
}

// loader is one loader's users, which it alone appends to, so that its
// expected versions are exact.
type loader struct {
	r     *rand.Rand
	users []*genUser
	next  int // cursor into a shuffled cycle over users
}

// batch makes the next n events, up to loadEventsPerStream per user, the
// users in a shuffled cycle; it counts the grants among them.
func (ld *loader) batch(n int, grants *atomic.Int64) (appends []event.StreamAppend, touched []*genUser) {
	for n > 0 {
		if ld.next == len(ld.users) {
			ld.r.Shuffle(len(ld.users), func(i, j int) { ld.users[i], ld.users[j] = ld.users[j], ld.users[i] })
			ld.next = 0
		}
		u := ld.users[ld.next]
		ld.next++
		k := min(n, loadEventsPerStream)
		n -= k
		evs := make([]event.Event, k)
		for i := range evs {
			evs[i] = u.next(ld.r)
			if _, ok := evs[i].Data.(rights.Granted); ok {
				grants.Add(1)
			}
		}
		appends = append(appends, event.StreamAppend{Stream: rights.Stream(u.id), ExpectedVersion: u.version, Events: evs})
		touched = append(touched, u)
	}
	return appends, touched
}

// progressLoop prints done/total with rate and ETA every 5 seconds until
// the returned function is called.
func progressLoop(ctx context.Context, what string, f func() (done, total int64)) func() {
	stop := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-t.C:
				d, total := f()
				el := time.Since(start)
				r := rate(d, el)
				eta := "?"
				if r > 0 && total > 0 {
					eta = time.Duration(float64(total-d) / r * float64(time.Second)).Round(time.Second).String()
				}
				progressf("%s: %d/%d events, %s/s, ETA %s", what, d, total, thousands(r), eta)
			}
		}
	}()
	return func() { close(stop); <-finished }
}

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		remaining = int64(cfg.events)
		done      atomic.Int64
		grants    atomic.Int64
		wg        sync.WaitGroup
		errOnce   sync.Once
		firstErr  error
		mu        sync.Mutex
		allUsers  []*genUser
	)
	claim := func() int {
		for {
			r := atomic.LoadInt64(&remaining)
			if r <= 0 {
				return 0
			}
			n := min(r, loadEventsPerTx)
			if atomic.CompareAndSwapInt64(&remaining, r, r-n) {
				return int(n)
			}
		}
	}
	start := time.Now()
	for l := range loadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(l), 3))
			var users []*genUser
			for u := l; u < genUsers; u += loadWorkers {
				users = append(users, newGenUser(r, fmt.Sprintf("user-%05d", u)))
			}
			mu.Lock()
			allUsers = append(allUsers, users...)
			mu.Unlock()
			next := len(users) // cursor into a shuffled cycle over users
			for {
				n := claim()
				if n == 0 {
					return
				}
				var appends []event.StreamAppend
				var touched []*genUser
				for n > 0 {
					if next == len(users) {
						r.Shuffle(len(users), func(i, j int) { users[i], users[j] = users[j], users[i] })
						next = 0
					}
					u := users[next]
					next++
					k := min(n, loadEventsPerStream)
					n -= k
					evs := make([]event.Event, k)
					for i := range evs {
						evs[i] = u.next(r)
						if _, ok := evs[i].Data.(rights.Granted); ok {
							grants.Add(1)
						}
					}
					appends = append(appends, event.StreamAppend{Stream: rights.Stream(u.id), ExpectedVersion: u.version, Events: evs})
					touched = append(touched, u)
				}
				if _, err := store.AppendMulti(ctx, appends...); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				for i, u := range touched {
					u.version += int64(len(appends[i].Events))
					done.Add(int64(len(appends[i].Events)))
				}
			}
		}()
	}
	stopProgress := progressLoop(ctx, "load", func() (int64, int64) { return done.Load(), int64(cfg.events) })
	wg.Wait()
	stopProgress()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	took := time.Since(start)
	res.model = modelOf(allUsers)
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
	res.add(figure{name: "load: AppendMulti bulk", value: rate(done.Load(), took), unit: "events/s",
		detail: fmt.Sprintf("%d events (%d grants, %d revokes) in %.1fs, %d per transaction; events table now %s (with indexes)",
			done.Load(), grants.Load(), done.Load()-grants.Load(), took.Seconds(), loadEventsPerTx, size)})
	return nil
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

package projections

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
)

// WaitFor is read-your-writes: it returns once every named projection
// (every projection of the runtime if none is named) has applied the log up
// to pos (the AppendResult.Last of a write), or when Options.WaitTimeout
// (or ctx) runs out. It reports whether all of them caught up;
// a write endpoint answers either way.
//
// It works across processes (it reads the checkpoints, whoever advances
// them) and is cheap: however many requests wait, one goroutine reads the
// checkpoint table every few milliseconds, and only while someone waits;
// the batches this process's runners commit advance the cached
// checkpoints at once, without a query.
func (rt *Runtime) WaitFor(ctx context.Context, pos event.Position, names ...string) bool {
	bound := rt.opts.WaitTimeout
	if bound <= 0 {
		bound = DefaultWaitTimeout
	}
	return rt.WaitForBound(ctx, bound, pos, names...)
}

// WaitForBound is WaitFor with an explicit bound.
func (rt *Runtime) WaitForBound(ctx context.Context, bound time.Duration, pos event.Position, names ...string) bool {
	if pos.IsZero() {
		return true
	}
	if len(names) == 0 {
		names = rt.Names()
	}
	return rt.watcher.wait(ctx, pos, names, time.Now().Add(bound))
}

const watchInterval = 5 * time.Millisecond

// cpWatcher caches the checkpoints for WaitFor.
type cpWatcher struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pos     map[string]event.Position
	changed postgres.Broadcast // fired after each refresh and advance
	waiters int
	running bool
	kickC   chan struct{}
}

func newCPWatcher(pool *pgxpool.Pool) *cpWatcher {
	return &cpWatcher{pool: pool, pos: map[string]event.Position{}, kickC: make(chan struct{}, 1)}
}

// advance records that projection name committed its checkpoint at pos
// in this process, and wakes the waiters.
func (w *cpWatcher) advance(name string, pos event.Position) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.raiseLocked(name, pos) {
		w.changed.Fire()
	}
}

// raiseLocked moves name's cached checkpoint up to pos, never down: a
// checkpoint never goes back (a rebuild switches at or after the live
// checkpoint), while a refresh that read the table before a local batch
// committed may end after advance. w.mu must be held.
func (w *cpWatcher) raiseLocked(name string, pos event.Position) bool {
	if cp, ok := w.pos[name]; ok && !cp.Less(pos) {
		return false
	}
	w.pos[name] = pos
	return true
}

// kick asks for a refresh now (a rebuild switched a projection).
func (w *cpWatcher) kick() {
	select {
	case w.kickC <- struct{}{}:
	default:
	}
}

// reachedLocked reports whether every name's cached checkpoint is at or
// after pos. w.mu must be held.
func (w *cpWatcher) reachedLocked(pos event.Position, names []string) bool {
	for _, n := range names {
		cp, ok := w.pos[n]
		if !ok || cp.Less(pos) {
			return false
		}
	}
	return true
}

func (w *cpWatcher) wait(ctx context.Context, pos event.Position, names []string, deadline time.Time) bool {
	w.mu.Lock()
	if w.reachedLocked(pos, names) {
		w.mu.Unlock()
		return true
	}
	w.waiters++
	if !w.running { // else the cache is at most watchInterval old
		w.running = true
		go w.loop()
	}
	ch := w.changed.C()
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.waiters--
		w.mu.Unlock()
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case <-ch:
		case <-timer.C:
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.reachedLocked(pos, names)
		case <-ctx.Done():
			return false
		}
		w.mu.Lock()
		ok := w.reachedLocked(pos, names)
		ch = w.changed.C()
		w.mu.Unlock()
		if ok {
			return true
		}
	}
}

// loop refreshes the cache while anyone waits.
func (w *cpWatcher) loop() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		w.refresh()
		w.mu.Lock()
		if w.waiters == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		t.Reset(watchInterval)
		select {
		case <-w.kickC:
		case <-t.C:
		}
	}
}

func (w *cpWatcher) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rows, err := w.pool.Query(ctx, `SELECT name, tx_id::text::bigint, position FROM projection_checkpoints`)
	if err != nil {
		return // keep waiting on the cache; the waiters' deadlines hold
	}
	type checkpoint struct {
		name string
		pos  event.Position
	}
	var fresh []checkpoint
	for rows.Next() {
		var name string
		var tx, p int64
		if err := rows.Scan(&name, &tx, &p); err != nil {
			rows.Close()
			return
		}
		if !strings.Contains(name, "@") {
			fresh = append(fresh, checkpoint{name, event.Position{TxID: uint64(tx), Pos: p}})
		}
	}
	rows.Close()
	if rows.Err() != nil {
		return
	}
	w.mu.Lock()
	for _, cp := range fresh {
		w.raiseLocked(cp.name, cp.pos)
	}
	w.changed.Fire()
	w.mu.Unlock()
}

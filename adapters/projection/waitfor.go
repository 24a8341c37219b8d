package projection

import (
	"context"
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

// cpWatcher caches the checkpoints for WaitFor. The checkpoint table is
// the truth: a refresh replaces the cache with what it read (a checkpoint
// can go back: one whose tables were lost is replayed from the start),
// except for the checkpoints this process's runners committed after the
// refresh began, which it may not have seen.
type cpWatcher struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pos     map[string]event.Position
	local   map[string]localCheckpoint // the last batch each local runner committed
	seq     uint64                     // counts advances
	changed postgres.Broadcast         // fired after each refresh, advance and hear
	// heard is, for each announcing projection (Announcer) while the
	// process hears the announcements (hearing), the checkpoint up to
	// which every batch was handed to Options.OnChange: a read-your-writes
	// wait is over once it is reached too, so that what readers keep in
	// memory is never older than what the waiter wrote.
	heard   map[string]event.Position
	gated   map[string]bool
	hearing func() bool
	// missed is told of an announcing projection's checkpoint that stayed
	// ahead of what was heard for missAfter (behind: since when).
	missed  func(name string, cp event.Position)
	behind  map[string]behind
	waiters int
	running bool
	kickC   chan struct{}
}

// behind is a checkpoint read ahead of what was heard, and when.
type behind struct {
	cp    event.Position
	since time.Time
}

// missAfter is how long a checkpoint may stand ahead of what was heard
// before its announcements count as missed.
const missAfter = 500 * time.Millisecond

// localCheckpoint is a checkpoint a runner of this process committed, and
// the advance that told the watcher.
type localCheckpoint struct {
	pos event.Position
	seq uint64
}

func newCPWatcher(pool *pgxpool.Pool) *cpWatcher {
	return &cpWatcher{pool: pool, pos: map[string]event.Position{}, local: map[string]localCheckpoint{},
		heard: map[string]event.Position{}, gated: map[string]bool{}, hearing: func() bool { return false },
		behind: map[string]behind{},
		kickC:  make(chan struct{}, 1)}
}

// advance records that a runner of this process committed projection
// name's checkpoint at pos, and wakes the waiters.
func (w *cpWatcher) advance(name string, pos event.Position) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	w.local[name] = localCheckpoint{pos: pos, seq: w.seq}
	if cp, ok := w.pos[name]; !ok || cp.Less(pos) {
		w.pos[name] = pos
		w.changed.Fire()
	}
}

// forget drops what the watcher knows of name's checkpoint (its tables
// were re-created and it replays the log from the start).
func (w *cpWatcher) forget(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pos, name)
	delete(w.local, name)
}

// kick asks for a refresh now (a rebuild switched a projection).
func (w *cpWatcher) kick() {
	select {
	case w.kickC <- struct{}{}:
	default:
	}
}

// hear records that every batch of projection name up to pos was handed
// to Options.OnChange (or that what readers kept was dropped after they
// committed), and wakes the waiters. It moves the heard checkpoint on,
// or sets it when set (a replay from the start takes it back).
func (w *cpWatcher) hear(name string, pos event.Position, set bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cp, ok := w.heard[name]; set || !ok || cp.Less(pos) {
		w.heard[name] = pos
		w.changed.Fire()
	}
}

// reachedLocked reports whether every name's cached checkpoint is at or
// after pos, and for the announcing projections, while announcements are
// heard, the heard checkpoint too. w.mu must be held.
func (w *cpWatcher) reachedLocked(pos event.Position, names []string) bool {
	for _, n := range names {
		cp, ok := w.pos[n]
		if !ok || cp.Less(pos) {
			return false
		}
		if w.gated[n] && w.hearing() {
			if h, ok := w.heard[n]; !ok || h.Less(pos) {
				return false
			}
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
	if !w.running { // else the loop reads the table again within watchInterval
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
		w.checkHeard()
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

// checkHeard tells missed of the announcing projections whose checkpoint
// has stood ahead of what was heard for missAfter.
func (w *cpWatcher) checkHeard() {
	if w.missed == nil || !w.hearing() {
		return
	}
	var late []checkpoint
	w.mu.Lock()
	for name, gated := range w.gated {
		if !gated {
			continue
		}
		heard := w.heard[name]
		if b, ok := w.behind[name]; ok && !heard.Less(b.cp) {
			delete(w.behind, name)
		}
		b, ok := w.behind[name]
		switch cp := w.pos[name]; {
		case !ok && heard.Less(cp):
			w.behind[name] = behind{cp: cp, since: time.Now()}
		case ok && time.Since(b.since) > missAfter:
			late = append(late, checkpoint{name, b.cp})
			delete(w.behind, name)
		}
	}
	w.mu.Unlock()
	for _, cp := range late {
		w.missed(cp.name, cp.pos)
	}
}

func (w *cpWatcher) refresh() {
	began := w.began()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fresh, err := readCheckpoints(ctx, w.pool, nil)
	if err != nil {
		return // keep waiting on the cache; the waiters' deadlines hold
	}
	w.replace(began, fresh)
}

// began is the advance count when a refresh begins to read the table.
func (w *cpWatcher) began() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// replace makes what a refresh read, beginning after advance number
// began, the cache, keeping the later local advances it may have missed.
func (w *cpWatcher) replace(began uint64, fresh []checkpoint) {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := make(map[string]event.Position, len(fresh))
	for _, cp := range fresh {
		next[cp.name] = cp.pos
	}
	for name, l := range w.local {
		if cp, ok := next[name]; l.seq > began && (!ok || cp.Less(l.pos)) {
			next[name] = l.pos
		}
	}
	w.pos = next
	w.changed.Fire()
}

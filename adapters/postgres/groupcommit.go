package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// Group commit: appends made at the same time share one transaction.
//
// A durable commit costs PostgreSQL far more than the rows it writes: a
// transaction id, a snapshot, locks, a commit record and its WAL flush,
// and the round trips of BEGIN and COMMIT. One command per request (an item
// create, an app-user registration, a loyalty earn) is one small append,
// so under load most of the store's work was that overhead, once per
// command. The committer gathers the appends that arrive while earlier
// groups are in flight and writes each gathered group with one statement
// (appendSetSQL) in one transaction: a caller that finds a free slot goes
// at once, alone (no added wait when the store is idle); the callers that
// come while groupSlots groups run queue, and the first of them to find a
// slot takes them all.
//
// A group goes through only whole: if any of its guards does not hold or
// any stream cannot be claimed (a version conflict, a retried append whose
// events are stored already, a failing statement), the transaction rolls
// back and every caller of the group takes its own path (AppendMulti's,
// Append's), which tells conflicts and duplicates apart exactly as without
// groups. A group of calls that each write one stream and take no guard
// (Append) needs no transaction: its one statement writes each stream
// whole or not at all, in one round trip, and only the calls whose stream
// it could not claim take their own path. A group whose commit fails in an unknown state is safe the same
// way: a caller's own path finds its events stored and acknowledges the
// append as a duplicate.
//
// Two groups in flight never share a stream that one of them writes (a
// stream only guarded may be guarded by both): groups lock no rows across
// each other in different orders, so they cannot deadlock.
const (
	groupSlots     = 2   // groups in flight at once
	groupMaxCalls  = 64  // calls in one group
	groupMaxEvents = 512 // events in one group
	// A call joins groups only if it writes at most joinMaxWrites
	// streams and joinMaxEvents events: larger ones (imports) go alone.
	joinMaxWrites = 4
	joinMaxEvents = 32
	// groupTimeout bounds one group's transaction. It does not follow any
	// caller's context: a group runs for all its callers.
	groupTimeout = 30 * time.Second
)

// groupCall is one caller's append, waiting for its group.
type groupCall struct {
	writes, guards []event.StreamAppend
	events         int
	done           chan struct{} // closed once res and ok are set
	res            event.AppendResult
	ok             bool // written; false: the caller takes its own path
}

// committer gathers appends into groups (see above).
type committer struct {
	s *EventStore

	mu      sync.Mutex
	queue   []*groupCall
	running int
	writing map[string]int // streams written by the groups in flight
	guarded map[string]int // streams guarded by the groups in flight
	changed chan struct{}  // closed when a group ends

	groups, calls atomic.Int64 // groups committed, calls they wrote
}

func newCommitter(s *EventStore) *committer {
	return &committer{s: s, writing: map[string]int{}, guarded: map[string]int{}, changed: make(chan struct{})}
}

// joinable reports whether writes may join a group: small, distinct
// streams, each new or at an exact version (see oneStatement).
func joinable(writes []event.StreamAppend) (events int, ok bool) {
	if len(writes) == 0 || len(writes) > joinMaxWrites || !oneStatement(writes) {
		return 0, false
	}
	for _, w := range writes {
		events += len(w.Events)
	}
	return events, events <= joinMaxEvents
}

// append writes writes (taking guards) in a group. ok is false when the
// call cannot join groups (or ctx has ended) or its group did not go
// through: the caller then appends on its own path. Once queued, the call
// waits for its group whatever ctx does: the group may commit it.
func (c *committer) append(ctx context.Context, writes, guards []event.StreamAppend) (event.AppendResult, bool) {
	n, ok := joinable(writes)
	if !ok || ctx.Err() != nil {
		return event.AppendResult{}, false
	}
	call := &groupCall{writes: writes, guards: guards, events: n, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, call)
	for {
		select {
		case <-call.done:
			c.mu.Unlock()
			return call.res, call.ok
		default:
		}
		if c.running < groupSlots {
			if g := c.take(); len(g) > 0 {
				c.mu.Unlock()
				c.run(g)
				c.mu.Lock()
				c.finish(g)
				continue
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-call.done:
			return call.res, call.ok
		case <-changed:
		}
		c.mu.Lock()
	}
}

// take removes from the queue the calls of the next group, in order, and
// marks their streams in flight: those that fit together and touch no
// stream a group in flight writes. c.mu must be held.
func (c *committer) take() []*groupCall {
	var g []*groupCall
	guards := map[string]int64{} // the group's guards and their versions
	events := 0
	rest := c.queue[:0]
	for _, call := range c.queue {
		if len(g) < groupMaxCalls && events+call.events <= groupMaxEvents && c.fits(call, guards) {
			g = append(g, call)
			events += call.events
			for _, w := range call.writes {
				c.writing[w.Stream]++
			}
			for _, gd := range call.guards {
				guards[gd.Stream] = gd.ExpectedVersion
				c.guarded[gd.Stream]++
			}
		} else {
			rest = append(rest, call)
		}
	}
	clear(c.queue[len(rest):])
	c.queue = rest
	if len(g) > 0 {
		c.running++
	}
	return g
}

// fits reports whether call can join the group being taken: it writes no
// stream that the group or a group in flight writes or guards (take marks
// the group's streams in writing and guarded as it takes calls), and
// guards no stream they write, nor one the group guards (guards) at
// another version.
func (c *committer) fits(call *groupCall, guards map[string]int64) bool {
	for _, w := range call.writes {
		if c.writing[w.Stream] > 0 || c.guarded[w.Stream] > 0 {
			return false
		}
	}
	for _, gd := range call.guards {
		if v, g := guards[gd.Stream]; c.writing[gd.Stream] > 0 || (g && v != gd.ExpectedVersion) {
			return false
		}
	}
	return true
}

// finish releases g's streams and wakes the callers waiting for a slot.
// c.mu must be held.
func (c *committer) finish(g []*groupCall) {
	for _, call := range g {
		for _, w := range call.writes {
			if c.writing[w.Stream]--; c.writing[w.Stream] == 0 {
				delete(c.writing, w.Stream)
			}
		}
		for _, gd := range call.guards {
			if c.guarded[gd.Stream]--; c.guarded[gd.Stream] == 0 {
				delete(c.guarded, gd.Stream)
			}
		}
	}
	c.running--
	close(c.changed)
	c.changed = make(chan struct{})
}

// run writes group g and hands each call its result.
func (c *committer) run(g []*groupCall) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	var writes, guards []event.StreamAppend
	type guard struct {
		stream  string
		version int64
	}
	guarded := map[guard]bool{}
	for _, call := range g {
		writes = append(writes, call.writes...)
		for _, gd := range call.guards {
			if k := (guard{gd.Stream, gd.ExpectedVersion}); !guarded[k] {
				guarded[k] = true
				guards = append(guards, gd)
			}
		}
	}
	// Calls of one stream each and no guard need no transaction: the
	// statement writes each stream's events whole or not at all, so the
	// calls whose streams it could not claim simply take their own path.
	alone := len(guards) == 0
	for _, call := range g {
		alone = alone && len(call.writes) == 1
	}
	var written map[string][]writtenRow
	var ok bool
	if alone {
		written, ok = c.s.appendEach(ctx, writes)
	} else {
		written, ok = c.s.appendGroup(ctx, writes, guards)
	}
	n := 0
	for _, call := range g {
		call.ok = ok
		if ok && alone {
			w := call.writes[0]
			call.ok = len(written[w.Stream]) == len(w.Events)
		}
		if call.ok {
			n++
			for _, w := range call.writes {
				for _, r := range written[w.Stream] {
					call.res.Include(r.at, r.version)
				}
			}
		}
		close(call.done)
	}
	if n > 0 {
		c.groups.Add(1)
		c.calls.Add(int64(n))
	}
}

// writtenRow is one event a group wrote.
type writtenRow struct {
	at      event.Position
	version int64
}

// groupSetSQL is appendSetSQL returning each event's stream too.
const groupSetSQL = appendSetSQL + `, stream_id`

// appendGroup writes writes with one statement after taking guards, in one
// transaction, and returns the events written by stream; ok is false, with
// nothing written, unless every guard held and every event went in. It
// takes two round trips: BEGIN, the guards and the statement in one, then
// COMMIT (or ROLLBACK).
func (s *EventStore) appendGroup(ctx context.Context, writes, guards []event.StreamAppend) (written map[string][]writtenRow, ok bool) {
	args, total, err := s.setArgs(writes)
	if err != nil {
		return nil, false
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false
	}
	defer conn.Release()
	defer func() {
		end := "ROLLBACK"
		if ok {
			end = "COMMIT"
		}
		if _, err := conn.Exec(ctx, end); err != nil {
			ok = false
			conn.Conn().Close(context.Background()) //nolint:errcheck // the transaction's state is unknown: do not reuse the connection
		}
	}()
	var b pgx.Batch
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	if len(guards) > 0 {
		queueGuards(&b, guards)
	}
	b.Queue(groupSetSQL, args...)
	br := conn.SendBatch(ctx, &b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, false
	}
	if len(guards) > 0 {
		if held, _ := guardsHeld(br, guards); !held {
			return nil, false
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, false
	}
	written, count, err := scanWritten(rows, len(writes))
	if err != nil || count != total || br.Close() != nil {
		return nil, false
	}
	return written, true
}

// appendEach writes writes, one stream per call and no guards, with one
// statement and no transaction around it, in one round trip: the streams
// it could not claim (a version conflict, a retried append) are left out.
// ok is false, with nothing written, if the statement failed.
func (s *EventStore) appendEach(ctx context.Context, writes []event.StreamAppend) (map[string][]writtenRow, bool) {
	args, _, err := s.setArgs(writes)
	if err != nil {
		return nil, false
	}
	rows, err := s.pool.Query(ctx, groupSetSQL, args...)
	if err != nil {
		return nil, false
	}
	written, _, err := scanWritten(rows, len(writes))
	return written, err == nil
}

// scanWritten reads the rows groupSetSQL returns, by stream, and closes
// them.
func scanWritten(rows pgx.Rows, streams int) (map[string][]writtenRow, int, error) {
	defer rows.Close()
	written := make(map[string][]writtenRow, streams)
	count := 0
	for rows.Next() {
		var txID, pos, ver int64
		var stream string
		if err := rows.Scan(&txID, &pos, &ver, &stream); err != nil {
			return nil, 0, err
		}
		count++
		written[stream] = append(written[stream], writtenRow{at: event.Position{TxID: uint64(txID), Pos: pos}, version: ver})
	}
	return written, count, rows.Err()
}

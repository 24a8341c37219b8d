package memstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halocms/halocms/domain/event"
)

// write is one stream's append, validated and encoded.
type write struct {
	stream   string
	expected int64
	events   []*record // all but the position, version and time
}

// Append writes events to the end of stream, atomically, if the stream is at
// expectedVersion (event.NoStream for a new stream, event.AnyVersion to skip
// the check). A stale expected version returns a *event.ConflictError. An
// append whose event ids are all stored already is acknowledged as a
// duplicate without writing anything.
func (s *Store) Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error) {
	if len(events) == 0 {
		return event.AppendResult{}, errors.New("append: no events")
	}
	w, err := s.prepare(event.StreamAppend{Stream: stream, ExpectedVersion: expectedVersion, Events: events})
	if err != nil {
		return event.AppendResult{}, err
	}
	return s.log.commit(ctx, []write{w}, nil)
}

// AppendMulti appends to several streams at once: all or none. Appends
// without events are guards (see event.StreamAppend). The result's Last
// is the highest position written and its Version the highest version, as
// the PostgreSQL store reports them; a call whose every event is stored
// already is acknowledged as a duplicate, whatever its guards say.
func (s *Store) AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error) {
	writes, guards, err := s.prepareAll(appends)
	if err != nil {
		return event.AppendResult{}, err
	}
	return s.log.commit(ctx, writes, guards)
}

// prepareAll separates appends into the writes, prepared, and the guards,
// and refuses a call with no write, or a guard on no stream, with no
// version to expect or on a stream the same call writes to.
func (s *Store) prepareAll(appends []event.StreamAppend) (writes []write, guards []event.StreamAppend, err error) {
	for _, a := range appends {
		if len(a.Events) == 0 {
			guards = append(guards, a)
			continue
		}
		w, err := s.prepare(a)
		if err != nil {
			return nil, nil, err
		}
		writes = append(writes, w)
	}
	if len(writes) == 0 {
		return nil, nil, errors.New("append: no events")
	}
	for _, g := range guards {
		if g.Stream == "" || g.ExpectedVersion <= 0 {
			return nil, nil, fmt.Errorf("append: a guard needs a stream and an expected version above 0 (got %q at %d)", g.Stream, g.ExpectedVersion)
		}
		for _, w := range writes {
			if w.stream == g.Stream {
				return nil, nil, fmt.Errorf("append: a guard on %s, which the same call writes to", g.Stream)
			}
		}
	}
	return writes, guards, nil
}

// prepare checks one stream's append and encodes its events as the
// PostgreSQL store does (see eventcodec.Registry.EncodeEvent), refusing
// what it would refuse.
func (s *Store) prepare(a event.StreamAppend) (write, error) {
	if a.Stream == "" {
		return write{}, errors.New("append: empty stream id")
	}
	if a.ExpectedVersion < event.AnyVersion {
		return write{}, fmt.Errorf("append: invalid expected version %d", a.ExpectedVersion)
	}
	if err := refusedText(a.Stream); err != nil {
		return write{}, fmt.Errorf("append to %q: %w: the stream id: %w", a.Stream, event.ErrDataRejected, err)
	}
	w := write{stream: a.Stream, expected: a.ExpectedVersion, events: make([]*record, len(a.Events))}
	for i, ev := range a.Events {
		st, err := s.codec.EncodeEvent(ev)
		if err != nil {
			return write{}, err
		}
		meta := ev.Meta
		meta.EventID = st.ID.String()
		if err := refused(st.Data, meta); err != nil {
			return write{}, fmt.Errorf("append to %s: %w: %w", a.Stream, event.ErrDataRejected, err)
		}
		w.events[i] = &record{stream: a.Stream, typ: st.Type, schema: st.Version, data: st.Data, meta: meta}
	}
	return w, nil
}

// plan is what a call will write: the writes that are not retries, each
// with its stream's version before it, and where the retried ones are.
type plan struct {
	todo []planned
	dups int                // writes whose events are all stored
	dup  event.AppendResult // where those are
}

type planned struct {
	write
	from int64
}

// commit appends writes and checks guards, in one step.
func (l *memLog) commit(ctx context.Context, writes []write, guards []event.StreamAppend) (event.AppendResult, error) {
	var res event.AppendResult
	err := l.locked(ctx, writes, func() error {
		p, err := l.plan(writes, guards, "")
		if err == nil {
			res = l.apply(p, nil)
		}
		return err
	})
	return res, err
}

// locked runs f under the log's lock, once no open transaction claims a
// stream or an event id of writes: an append to them waits for the
// transaction to end, as it waits for the row locks of PostgreSQL's.
func (l *memLog) locked(ctx context.Context, writes []write, f func() error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		tx := l.claimant(writes)
		if tx == nil {
			defer l.mu.Unlock()
			return f()
		}
		l.mu.Unlock()
		select {
		case <-tx.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// plan decides, without changing anything, what writes will write and
// whether guards hold: each write in turn is a retry (every event id
// stored, in its stream), or at the version it expects, or a conflict.
// holder is a stream the caller holds (AppendHeld): guards on it hold.
func (l *memLog) plan(writes []write, guards []event.StreamAppend, holder string) (plan, error) {
	var p plan
	versions := map[string]int64{} // the streams' versions after the writes planned
	planning := map[string]bool{}  // the event ids of the writes planned
	version := func(stream string) int64 {
		if v, ok := versions[stream]; ok {
			return v
		}
		return l.version(stream)
	}
	for _, w := range writes {
		var stored event.AppendResult
		n := 0
		for _, e := range w.events {
			id := e.meta.EventID
			if r, ok := l.ids[id]; ok {
				if r.stream != w.stream {
					return plan{}, fmt.Errorf("append to %s: event id already used in stream %s", w.stream, r.stream)
				}
				stored.Include(r.pos, r.version)
				n++
			} else if planning[id] {
				return plan{}, fmt.Errorf("append to %s: event id %s appended twice", w.stream, id)
			}
			planning[id] = true
		}
		if n == len(w.events) {
			p.dups++
			p.dup.Include(stored.Last, stored.Version)
			continue
		}
		v := version(w.stream)
		if w.expected == event.NoStream && v != 0 || w.expected > 0 && w.expected != v {
			return plan{}, &event.ConflictError{StreamID: w.stream, Expected: w.expected, Actual: v}
		}
		if n > 0 {
			return plan{}, fmt.Errorf("append to %s: some event ids already stored, others not", w.stream)
		}
		p.todo = append(p.todo, planned{write: w, from: v})
		versions[w.stream] = v + int64(len(w.events))
	}
	if len(p.todo) == 0 {
		return p, nil // a retry: nothing to write, whatever the guards say
	}
	for _, g := range guards {
		_, held := l.holds[g.Stream]
		held = held && g.Stream != holder
		if v := l.version(g.Stream); held || l.claimedStreams[g.Stream] != nil || v != g.ExpectedVersion {
			return plan{}, &event.ConflictError{StreamID: g.Stream, Expected: g.ExpectedVersion, Actual: v}
		}
	}
	return p, nil
}

// apply writes what p plans in one transaction: committed at once, or
// left open in tx (see openTx). Its events are stamped alike, with the
// microsecond precision of PostgreSQL's timestamps.
func (l *memLog) apply(p plan, tx *openTx) event.AppendResult {
	if len(p.todo) == 0 {
		res := p.dup
		res.Duplicate = true
		return res
	}
	l.lastTx++
	at := time.Now().Truncate(time.Microsecond)
	res := p.dup
	for _, w := range p.todo {
		for i, e := range w.events {
			l.lastPos++
			r := *e
			r.pos, r.version, r.at = event.Position{TxID: l.lastTx, Pos: l.lastPos}, w.from+int64(i)+1, at
			res.Include(r.pos, r.version)
			if tx != nil {
				tx.records = append(tx.records, &r)
			} else {
				l.add(&r)
			}
		}
	}
	if tx != nil {
		l.opened(tx, l.lastTx)
	}
	return res
}

// add stores a committed record at the end of the log.
func (l *memLog) add(r *record) {
	l.records = append(l.records, r)
	l.streams[r.stream] = append(l.streams[r.stream], r)
	l.ids[r.meta.EventID] = r
}

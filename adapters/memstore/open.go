package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/halocms/halocms/domain/event"
)

// openTx is an append whose transaction is still open, as an append in a
// PostgreSQL transaction is until it commits: its events have their
// positions, but no reader sees them; appends to its streams or with its
// event ids wait for it to end, and guards on its streams fail; readers
// of the log stop below it, so that none moves past events that may
// still commit before those it has read. The store's own appends commit
// at once: only the contract suite opens transactions (through begin), to
// check what readers see of events committed out of order.
type openTx struct {
	id      uint64
	records []*record
	done    chan struct{} // closed when the transaction ends
}

// begin appends like Append, inside a transaction left open until commit
// or rollback is called (either, after the other, returns an error). A
// retry of events stored already opens nothing.
func (s *Store) begin(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (res event.AppendResult, commit, rollback func() error, err error) {
	if len(events) == 0 {
		return event.AppendResult{}, nil, nil, errors.New("append: no events")
	}
	w, err := s.prepare(event.StreamAppend{Stream: stream, ExpectedVersion: expectedVersion, Events: events})
	if err != nil {
		return event.AppendResult{}, nil, nil, err
	}
	var tx *openTx
	err = s.log.locked(ctx, []write{w}, func() error {
		p, err := s.log.plan([]write{w}, nil, "")
		if err != nil {
			return err
		}
		if len(p.todo) > 0 {
			tx = &openTx{done: make(chan struct{})}
		}
		res = s.log.apply(p, tx)
		return nil
	})
	if err != nil {
		return event.AppendResult{}, nil, nil, err
	}
	return res, func() error { return s.log.end(tx, true) }, func() error { return s.log.end(tx, false) }, nil
}

// opened registers tx, whose records apply has written, as transaction id.
func (l *memLog) opened(tx *openTx, id uint64) {
	tx.id = id
	l.open[id] = tx
	for _, r := range tx.records {
		l.claimedStreams[r.stream] = tx
		l.claimedIDs[r.meta.EventID] = tx
	}
}

// claimant is an open transaction that claims a stream or an event id of
// writes, or nil.
func (l *memLog) claimant(writes []write) *openTx {
	if len(l.open) == 0 {
		return nil
	}
	for _, w := range writes {
		if tx := l.claimedStreams[w.stream]; tx != nil {
			return tx
		}
		for _, e := range w.events {
			if tx := l.claimedIDs[e.meta.EventID]; tx != nil {
				return tx
			}
		}
	}
	return nil
}

// end commits (keep) or rolls back tx. Committed, its records take their
// places in the log, below those of the transactions after it that
// committed first.
func (l *memLog) end(tx *openTx, keep bool) error {
	if tx == nil {
		return nil // a retry: nothing was opened
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[tx.id] != tx {
		return errors.New("memstore: the transaction has ended already")
	}
	delete(l.open, tx.id)
	for _, r := range tx.records {
		delete(l.claimedStreams, r.stream)
		delete(l.claimedIDs, r.meta.EventID)
		if keep {
			i := sort.Search(len(l.records), func(i int) bool { return r.pos.Less(l.records[i].pos) })
			l.records = slices.Insert(l.records, i, r)
			l.streams[r.stream] = append(l.streams[r.stream], r)
			l.ids[r.meta.EventID] = r
		}
	}
	close(tx.done)
	return nil
}

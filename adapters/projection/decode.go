package projection

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// readLog returns up to limit events after the given position, on q (a
// transaction), or on the pool when q is nil, decoded for p (see Handles).
func (rt *Runtime) readLog(ctx context.Context, q projections.DB, p projections.Projector, after event.Position, limit int) ([]event.Recorded, error) {
	var querier postgres.Querier
	if q != nil {
		querier = q
	}
	evs, err := rt.store.ReadAllRaw(ctx, querier, after, limit)
	if err != nil {
		return nil, err
	}
	for i := range evs {
		if evs[i], err = rt.decodeFor(p, evs[i]); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// readLogLenient is readLog, but an event that cannot be decoded stays
// raw, its error in bad (nil when all decode): a parked event is left out
// before it would be applied, so it need not decode (see undecodable).
func (rt *Runtime) readLogLenient(ctx context.Context, q projections.DB, p projections.Projector, after event.Position, limit int) (evs []event.Recorded, bad map[event.Position]error, err error) {
	var querier postgres.Querier
	if q != nil {
		querier = q
	}
	if evs, err = rt.store.ReadAllRaw(ctx, querier, after, limit); err != nil {
		return nil, nil, err
	}
	for i := range evs {
		d, err := rt.decodeFor(p, evs[i])
		if err != nil {
			if bad == nil {
				bad = map[event.Position]error{}
			}
			bad[evs[i].Position] = err
			continue
		}
		evs[i] = d
	}
	return evs, bad, nil
}

// undecodable returns, as an EventFailure of p, the decoding error of the
// first of events that is in bad (nil if none is): the events about to be
// applied, parked ones left out.
func undecodable(p projections.Projector, events []event.Recorded, bad map[event.Position]error) error {
	if len(bad) == 0 {
		return nil
	}
	for _, e := range events {
		if err, ok := bad[e.Position]; ok {
			return &EventFailure{Projection: p.Name(), Position: e.Position, EventID: e.Meta.EventID, EventType: e.Type,
				StreamID: e.StreamID, Err: err, Hint: hint(p.Name(), e.Position, "rebuild")}
		}
	}
	return nil
}

// decode turns the raw data of rec into the domain event.
func (rt *Runtime) decode(rec event.Recorded) (event.Recorded, error) {
	d, err := rt.store.Decode(rec)
	if err != nil {
		return rec, fmt.Errorf("event %s (%s at %s): %w", rec.Type, rec.StreamID, rec.Position, err)
	}
	return d, nil
}

// decodeFor decodes rec for p: not at all when p declares (Selective) that
// it does not use events of rec's type (the last of a batch, or a type the
// codec does not know: see skipFor); Apply then sees the raw data, which
// it ignores like any event it does not use.
func (rt *Runtime) decodeFor(p projections.Projector, rec event.Recorded) (event.Recorded, error) {
	if s, ok := p.(projections.Selective); ok && !s.Handles(rec.Type) {
		return rec, nil
	}
	return rt.decode(rec)
}

// skipFor lists the known event types p declares (Selective) it does not
// use: its subscriber leaves their events out of its batches (but for a
// batch's last, which the checkpoint advances to; see EventsSchema.Skip).
func (rt *Runtime) skipFor(p projections.Projector) []string {
	s, ok := p.(projections.Selective)
	if !ok {
		return nil
	}
	var skip []string
	for _, t := range rt.store.Types() {
		if !s.Handles(t) {
			skip = append(skip, t)
		}
	}
	return skip
}

// decodeAll decodes a batch's events for p in place, on up to GOMAXPROCS
// goroutines: a runner is a serial stage (a batch import waits for the
// content projection), and decoding is most of its own work.
func (rt *Runtime) decodeAll(p projections.Projector, recs []event.Recorded) error {
	const minPerWorker = 100
	workers := max(1, min(runtime.GOMAXPROCS(0), len(recs)/minPerWorker))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(recs)/workers, (w+1)*len(recs)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				d, err := rt.decodeFor(p, recs[i])
				if err != nil {
					e := recs[i]
					errs[w] = &EventFailure{Projection: p.Name(), Position: e.Position, EventID: e.Meta.EventID, EventType: e.Type,
						StreamID: e.StreamID, Err: err, Hint: hint(p.Name(), e.Position, "live")}
					return
				}
				recs[i] = d
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// skipList is skipFor(p), never nil: a NULL list would make every type
// look skipped.
func (rt *Runtime) skipList(p projections.Projector) []string {
	if skip := rt.skipFor(p); skip != nil {
		return skip
	}
	return []string{}
}

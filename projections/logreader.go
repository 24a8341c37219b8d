package projections

import (
	"context"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
)

// readLog returns up to limit events after the given position, on q (a
// transaction), or on the pool when q is nil, decoded for p (see Handles).
func (rt *Runtime) readLog(ctx context.Context, q DB, p Projector, after event.Position, limit int) ([]event.Recorded, error) {
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

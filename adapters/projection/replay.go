package projection

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/operations"
)

// Replay gives projection name back the events parked for it, once a
// projector that can apply them is deployed: in one transaction, with the
// live checkpoint row locked (live batches wait), it applies those the
// projection went past to the live version with one Apply call, in log
// order, releases those it has not reached yet (its runners apply them in
// order when they get there), deletes their parkings, and appends an
// operations.ParkedEventsReplayed event. If Apply fails, nothing changes
// and the error names the event that fails. With nothing parked it does
// nothing.
//
// An event applied by Replay comes after the events the projection applied
// past it, out of log order: a projector whose result depends on the
// order may differ from what a rebuild would make; a rebuild after the
// replay makes the tables exactly as the log says.
func (rt *Runtime) Replay(ctx context.Context, name, by, reason string) (ReplayResult, error) {
	res := ReplayResult{Projection: name}
	p, ok := rt.byName[name]
	if !ok {
		return res, fmt.Errorf("%w: %q", ErrUnknownProjection, name)
	}
	by, reason, err := parkTexts(by, reason)
	if err != nil {
		return res, err
	}
	var failed []event.Recorded // what Apply failed on, for locate
	var schema string
	var change *announcement
	err = pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		version, cp, err := lockCheckpoint(ctx, tx, name)
		if err != nil {
			return err
		}
		schema = SchemaName(name, version)
		all, err := listParked(ctx, tx, name, 0)
		if err != nil || len(all) == 0 {
			return err
		}
		var evs []event.Recorded
		for _, pk := range all {
			if cp.Less(pk.Position) {
				res.Released = append(res.Released, pk)
				continue
			}
			// The event itself: the first one after the position just
			// before it (positions are integers).
			got, err := rt.readLog(ctx, tx, p, event.Position{TxID: pk.Position.TxID, Pos: pk.Position.Pos - 1}, 1)
			if err != nil {
				return err
			}
			if len(got) != 1 || got[0].Position != pk.Position {
				return fmt.Errorf("parked event %s is not readable in the log", pk.Position)
			}
			evs = append(evs, got[0])
			res.Applied = append(res.Applied, pk)
		}
		if len(evs) > 0 {
			if err := p.Apply(ctx, tx, schema, evs); err != nil {
				failed = evs
				return fmt.Errorf("apply %d parked events to v%d: %w", len(evs), version, err)
			}
			if a, ok := announcementOf(p, evs, cp); ok {
				if err := announce(ctx, tx, a); err != nil {
					return err
				}
				change = &a
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM projection_parked WHERE projection = $1`, name); err != nil {
			return err
		}
		return rt.record(ctx, tx, name, operations.ParkedEventsReplayed{Projection: name,
			Applied: parkedEvents(res.Applied), Released: parkedEvents(res.Released), By: by, Reason: reason})
	})
	if err != nil {
		if failed != nil {
			err = rt.explain(ctx, p, schema, failed, err, "replay")
		}
		return ReplayResult{Projection: name}, fmt.Errorf("replay parked events of %s: %w", name, err)
	}
	if change != nil {
		rt.changedHere(*change)
	}
	rt.fireAll()
	if len(res.Applied)+len(res.Released) > 0 {
		rt.log.Info("parked events replayed", "projection", name, "applied", len(res.Applied), "released", len(res.Released), "by", by)
	}
	return res, nil
}

func parkedEvents(ps []Parked) []operations.ParkedEvent {
	out := make([]operations.ParkedEvent, len(ps))
	for i, p := range ps {
		out[i] = operations.ParkedEvent{TxID: p.Position.TxID, Position: p.Position.Pos, EventID: p.EventID}
	}
	return out
}

package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// EventFailure is a projector's failure on one event of the log (found by
// locate): what an operator parks.
type EventFailure struct {
	Projection string
	Position   event.Position
	EventID    string
	EventType  string
	StreamID   string
	Err        error
	// Hint says what the operator can do.
	Hint string
}

func (e *EventFailure) Error() string {
	s := fmt.Sprintf("projection %s cannot apply event %s (%s, stream %s, id %s): %v", e.Projection, e.Position,
		e.EventType, e.StreamID, e.EventID, e.Err)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *EventFailure) Unwrap() error { return e.Err }

// locateTimeout bounds the search for the failing event of a batch.
const locateTimeout = time.Minute

// locate finds the event of events that p fails on in schema: the first
// one whose Apply fails once those before it are applied. It applies
// halves of the batch in savepoints of a transaction of its own, which it
// rolls back (nothing of it stays); run it once the failed batch's
// transaction ended, whose row locks it would wait for. found is false
// when no single event fails (a failure of the moment, or one of the
// batch as a whole).
func (rt *Runtime) locate(ctx context.Context, p projections.Projector, schema string, events []event.Recorded) (culprit event.Recorded, cause error, found bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), locateTimeout)
	defer cancel()
	tx, err := rt.pool.Begin(ctx)
	if err != nil {
		return culprit, nil, false
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	// try applies evs on top of what was applied so far, keeping them if
	// Apply succeeds; applyErr is Apply's error, err a failure to try.
	try := func(evs []event.Recorded) (applyErr, err error) {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, err
		}
		if applyErr = p.Apply(ctx, sp, schema, evs); applyErr != nil {
			return applyErr, sp.Rollback(ctx)
		}
		return nil, sp.Commit(ctx)
	}
	lo, hi := 0, len(events) // events[:lo] applied; events[lo:hi] fails, supposedly
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		applyErr, err := try(events[lo:mid])
		if err != nil {
			return culprit, nil, false
		}
		if applyErr != nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi-lo != 1 {
		return culprit, nil, false
	}
	applyErr, err := try(events[lo:hi])
	if err != nil || applyErr == nil {
		return culprit, nil, false
	}
	return events[lo], applyErr, true
}

// explain returns err naming the event of events that p fails on in
// schema, with what to do about it for the operation what ("live",
// "rebuild", "replay"); err itself when no single event fails.
func (rt *Runtime) explain(ctx context.Context, p projections.Projector, schema string, events []event.Recorded, err error, what string) error {
	var known *EventFailure
	if len(events) == 0 || errors.As(err, &known) {
		return err
	}
	ev, cause, ok := rt.locate(ctx, p, schema, events)
	if !ok {
		return err
	}
	return &EventFailure{Projection: p.Name(), Position: ev.Position, EventID: ev.Meta.EventID, EventType: ev.Type,
		StreamID: ev.StreamID, Err: cause, Hint: hint(p.Name(), ev.Position, what)}
}

// hint says what an operator can do about a failure on the event at pos
// of projection name, in the operation what ("live", "rebuild",
// "replay").
func hint(name string, pos event.Position, what string) string {
	park := fmt.Sprintf("`cms projections park %s --event %s --reason \"...\"`", name, pos)
	switch what {
	case "live":
		return "if no release fixes the projector yet, park the event to go on without it: " + park
	case "rebuild":
		return "if no release fixes the projector yet, park the event (rebuilds skip parked events too) and rebuild again: " + park
	case "replay":
		return "the projector still fails on it: nothing was replayed, the parked events stay parked"
	}
	return ""
}

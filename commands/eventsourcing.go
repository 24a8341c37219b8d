// Package commands holds the application services (one sub-package per
// bounded context) and what they share: loading a stream, deciding,
// appending with the expected version and retrying on conflict.
package commands

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

// EventStore is the part of the event store command handlers use.
type EventStore interface {
	ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error)
	Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error)
	AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error)
}

// Waiter blocks until the named projections have applied the log up to a
// position, or a bound passes (read-your-writes).
type Waiter interface {
	WaitFor(ctx context.Context, pos event.Position, projections ...string) bool
}

// Load folds a stream into a state and returns it with the stream version.
func Load[S any](ctx context.Context, store EventStore, stream string, zero S, apply func(S, any) S) (S, int64, error) {
	recs, err := store.ReadStream(ctx, stream, 0)
	if err != nil {
		return zero, 0, err
	}
	s := zero
	var version int64
	for _, r := range recs {
		s = apply(s, r.Data)
		version = r.StreamVersion
	}
	return s, version, nil
}

// MaxAttempts bounds the retries of a command whose stream moved on.
const MaxAttempts = 10

// Backoff sleeps a little before retry attempt n (jittered, growing), so
// that writers contending for one stream spread out.
func Backoff(ctx context.Context, attempt int) {
	d := time.Duration(attempt) * time.Millisecond
	d += time.Duration(rand.Int64N(int64(d) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Update loads a stream, asks decide for new events and appends them with
// the version it read, retrying from a fresh load on a version conflict.
// app, if not empty, goes into the events' metadata. It returns the state after the events and where they landed (a zero
// result when decide produced nothing).
func Update[S any](ctx context.Context, store EventStore, stream, app string, zero S, apply func(S, any) S,
	decide func(S) ([]any, error)) (S, event.AppendResult, error) {
	for attempt := 1; ; attempt++ {
		s, version, err := Load(ctx, store, stream, zero, apply)
		if err != nil {
			return s, event.AppendResult{}, err
		}
		evs, err := decide(s)
		if err != nil || len(evs) == 0 {
			return s, event.AppendResult{}, err
		}
		res, err := store.Append(ctx, stream, version, WithApp(Wrap(ctx, evs...), app)...)
		if errors.Is(err, event.ErrVersionConflict) && attempt < MaxAttempts {
			Backoff(ctx, attempt)
			continue
		}
		if errors.Is(err, event.ErrVersionConflict) {
			return s, res, fault.Conflictf("%s changed concurrently; try again", stream)
		}
		if err != nil {
			return s, res, fmt.Errorf("append %s: %w", stream, err)
		}
		for _, e := range evs {
			s = apply(s, e)
		}
		return s, res, nil
	}
}

// Wrap turns domain events into events to append, with metadata taken from
// the actor in ctx.
func Wrap(ctx context.Context, evs ...any) []event.Event {
	a := access.From(ctx)
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		out[i] = event.Event{Data: e, Meta: event.Metadata{
			Actor: a.Label(), ClientIP: a.ClientIP, CorrelationID: a.CorrelationID,
		}}
	}
	return out
}

// WithApp sets the app of the events' metadata.
func WithApp(evs []event.Event, app string) []event.Event {
	for i := range evs {
		evs[i].Meta.App = app
	}
	return evs
}

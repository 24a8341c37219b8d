// Package commands holds the application services (one sub-package per
// bounded context) and what they share: loading a stream, deciding,
// appending with the expected version and retrying on conflict.
package commands

import (
	"context"
	"errors"
	"fmt"

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

// Update loads a stream, asks decide for new events and appends them with
// the version it read, retrying from a fresh load on a version conflict
// (Retry's zero rule). app, if not empty, goes into the events'
// metadata. It returns the state after the events and where they landed
// (a zero result when decide produced nothing); a conflict that outlasted
// the attempts is a fault.Conflict naming the stream.
func Update[S any](ctx context.Context, store EventStore, stream, app string, zero S, apply func(S, any) S,
	decide func(S) ([]any, error)) (S, event.AppendResult, error) {
	s, res, err := Change(ctx, store, stream, zero, apply, func(S) string { return app }, decide)
	if errors.Is(err, event.ErrVersionConflict) {
		return s, res, fault.Conflictf("%s changed concurrently; try again", stream)
	}
	return s, res, err
}

// Change is Update for a command that says itself what a conflict means,
// and whose events carry the app of the state they were decided on
// (appOf): it returns a conflict that outlasted the attempts as it is
// (event.ErrVersionConflict, wrapped with the stream as every failed
// append is).
func Change[S any](ctx context.Context, store EventStore, stream string, zero S, apply func(S, any) S,
	appOf func(S) string, decide func(S) ([]any, error)) (S, event.AppendResult, error) {
	var (
		s   S
		evs []any
		res event.AppendResult
	)
	err := Retry{}.Run(ctx, func(int) error {
		var version int64
		var err error
		evs, res = nil, event.AppendResult{}
		if s, version, err = Load(ctx, store, stream, zero, apply); err != nil {
			return err
		}
		if evs, err = decide(s); err != nil || len(evs) == 0 {
			return err
		}
		if res, err = store.Append(ctx, stream, version, WithApp(Wrap(ctx, evs...), appOf(s))...); err != nil {
			return fmt.Errorf("append %s: %w", stream, err)
		}
		return nil
	})
	if err != nil {
		return s, res, err
	}
	for _, e := range evs {
		s = apply(s, e)
	}
	return s, res, nil
}

// UpdateMany is Update for a decision that spans several streams: decide
// loads what it needs and returns the events for each stream with the
// version it read the stream at; they are appended in one transaction
// (AppendMulti), and decided again from a fresh load when any of those
// streams moved on (Retry's zero rule). No appends ends it with a zero
// result. Unlike Update it returns errors as they come, a conflict that
// outlasted the attempts included (event.ErrVersionConflict): what that
// means depends on the command.
func UpdateMany(ctx context.Context, store EventStore, decide func() ([]event.StreamAppend, error)) (event.AppendResult, error) {
	var res event.AppendResult
	err := Retry{}.Run(ctx, func(int) error {
		res = event.AppendResult{}
		appends, err := decide()
		if err != nil || len(appends) == 0 {
			return err
		}
		res, err = store.AppendMulti(ctx, appends...)
		return err
	})
	return res, err
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

package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// AppendSet exposes the one-statement append to the tests, which check
// that it takes the appends it should and declines the others.
func (s *EventStore) AppendSet(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, bool, error) {
	writes, guards := splitGuards(appends)
	if !oneStatement(writes) {
		return event.AppendResult{}, false, nil
	}
	return s.appendSet(ctx, writes, guards)
}

// GuardTx takes guard g in the caller's transaction tx, as AppendMulti
// does, so that a test can hold a guard open.
func (s *EventStore) GuardTx(ctx context.Context, tx pgx.Tx, g event.StreamAppend) error {
	return s.guardTx(ctx, tx, g)
}

// Signal wakes the notifier as an append does, without adding types.
func (s *EventStore) Signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// GroupStats reports how many groups the store committed and how many
// calls they wrote (see groupcommit.go).
func (s *EventStore) GroupStats() (groups, calls int64) {
	return s.group.groups.Load(), s.group.calls.Load()
}

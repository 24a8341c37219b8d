package postgres

import (
	"context"

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

// Package analytics records the events apps report (HALO's daily events).
// A report is appended as it comes, with no stream to load and no version
// to check, and the service does not wait for the projection: nothing
// reads a report back at once, and its answer is built from the request.
package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/event"
)

// Appender is the part of the event store the service uses.
type Appender interface {
	Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error)
}

// IDs generates identifiers (the shard of a report with no device).
type IDs interface{ NewID() string }

// Service records reports.
type Service struct {
	store Appender
	ids   IDs
	now   func() time.Time
}

// NewService wires the service; every dependency is required.
func NewService(store Appender, ids IDs) *Service {
	if store == nil || ids == nil {
		panic("analytics.NewService: nil dependency")
	}
	return &Service{store: store, ids: ids, now: time.Now}
}

// DeviceOf is the device an actor reports from, as far as its token
// tells: an identified user's token names the user; an app token names
// no one ("").
func DeviceOf(a access.Actor) string {
	if a.Kind == access.Identified && a.ID != "" {
		return "identified:" + a.ID
	}
	return ""
}

// Record appends the report of the app whose token the caller holds (an
// app token or an app user's) and returns the event as recorded. Anyone
// else is refused: a CMS user reports for no app.
func (s *Service) Record(ctx context.Context, r analytics.Report) (analytics.Recorded, error) {
	a := access.From(ctx)
	if a.Kind == access.Anonymous {
		return analytics.Recorded{}, access.ErrUnauthenticated
	}
	ev, err := analytics.Record(r, a.ClientApp(), DeviceOf(a), a.ClientIP, s.now())
	if err != nil {
		return analytics.Recorded{}, err
	}
	stream := analytics.Stream(ev.App, ev.At, ev.Device, s.ids.NewID())
	evs := commands.WithApp(commands.Wrap(ctx, ev), ev.App)
	if _, err := s.store.Append(ctx, stream, event.AnyVersion, evs...); err != nil {
		return analytics.Recorded{}, fmt.Errorf("append %s: %w", stream, err)
	}
	return ev, nil
}

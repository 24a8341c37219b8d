package content

import (
	"context"
	"math"
	"time"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// SyncRequest is a sync of one module as a client asks for it (wire
// reference §5.6).
type SyncRequest struct {
	ModuleID   string  // iOS sends "" when it syncs by name
	ModuleName *string // when ModuleID is empty
	Locale     string
	// FromSync (the syncTimestamp of the client's last sync, nil for a
	// first sync) and ToSync (nil: now) as the client sent them: epoch
	// milliseconds as a number or a numeric string (content.ParseMillis).
	// They are read once the caller may sync the module.
	FromSync, ToSync any
}

// Sync answers a sync for the caller: the items of one module created,
// updated and deleted since FromSync, and the syncTimestamp to send next.
func (q *Queries) Sync(ctx context.Context, req SyncRequest) (SyncResult, error) {
	sc, err := q.scope(ctx)
	if err != nil {
		return SyncResult{}, err
	}
	m, err := q.syncModule(ctx, sc, req)
	if err != nil {
		return SyncResult{}, err
	}
	now := time.Now().UnixMilli()
	s := SyncQuery{AllApps: true, Module: m.ID, To: now, Locale: req.Locale, Fields: fieldsOf([]Module{m})}
	if err := syncWindow(&s, req, now); err != nil {
		return SyncResult{}, err
	}
	// Asked before the read: the answer describes the log only up to the
	// horizon (the read model may be behind the log, a transaction still
	// open may commit changes stamped since it began, and this server's
	// clock may be ahead of the database's), and the next sync, from that
	// instant (less SyncMargin), reports the rest. Said "up to To", a
	// change stamped more than SyncMargin before To but visible only after
	// this read would never be reported to this client.
	horizon, err := q.horizon.Horizon(ctx, Projection)
	if err != nil {
		return SyncResult{}, err
	}
	res, err := q.store.Sync(ctx, s)
	if err != nil {
		return SyncResult{}, err
	}
	floor := int64(math.MinInt64)
	if s.From != nil {
		// Not below fromSync either: that answer was no later than the
		// horizon of its time, so what is still missing is stamped after
		// it, or within SyncMargin of it, which the next sync looks back over.
		floor = min(*s.From, s.To)
	}
	asked := res.Timestamp
	res.Timestamp = max(min(res.Timestamp, horizon.UnixMilli()), floor)
	q.meter.SyncHeldBack(time.Duration(asked-res.Timestamp) * time.Millisecond)
	return res, nil
}

// syncModule resolves the module a sync names, among the caller's visible
// modules, or among deleted ones for an incremental sync, and checks that
// the caller may sync it.
func (q *Queries) syncModule(ctx context.Context, sc scope, req SyncRequest) (Module, error) {
	var ids, names []string
	switch {
	case req.ModuleID != "":
		ids = []string{req.ModuleID}
	case req.ModuleName != nil:
		names = []string{*req.ModuleName}
	default:
		return Module{}, fault.Invalidf("moduleName or moduleId is required").With("field", "moduleName")
	}
	mods, _, err := q.resolveModules(ctx, sc, ids, names)
	if err == nil && len(mods) == 0 && req.FromSync != nil {
		mods, err = q.deletedModules(ctx, sc, ids, names)
	}
	switch {
	case err != nil:
		return Module{}, err
	case len(mods) == 0:
		return Module{}, fault.NotFoundf("module not found").With("field", "moduleName")
	case len(mods) > 1:
		return Module{}, fault.Invalidf("several apps have a module named %q; sync by moduleId", *req.ModuleName).With("field", "moduleName")
	case !sc.mayRead(mods[0]):
		// Rights on single items show the module but do not cover a sync of it.
		return Module{}, fault.Forbiddenf("syncing a module needs the read right on the module or its app").With("permission", "read")
	}
	return mods[0], nil
}

// syncWindow sets the sync's From and To from the request's.
func syncWindow(s *SyncQuery, req SyncRequest, now int64) error {
	if req.FromSync != nil {
		from, err := content.ParseMillis(req.FromSync, "fromSync")
		if err != nil {
			return err
		}
		f := from.UnixMilli()
		s.From = &f
	}
	if req.ToSync != nil {
		to, err := content.ParseMillis(req.ToSync, "toSync")
		if err != nil {
			return err
		}
		toMS := to.UnixMilli()
		if s.From != nil {
			// An answer earlier than the client's last one (Android sends
			// the device's clock) would leave it a syncTimestamp below the
			// fromSync it sent: it keeps the greater, and would skip what
			// changed in between.
			toMS = max(toMS, *s.From)
		}
		s.To = min(toMS, now)
	}
	return nil
}

package content

import (
	"context"
	"strconv"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

// The live stream of an app's content changes, for the web CMS: what a
// change is (Change, read from the log by ChangeOf), who may follow which
// changes (liveScope), and the stream itself (Live, LiveStream). The
// fan-out of the log to every stream of a process is an adapter's
// (LiveFeed: adapters/live).

// Change is one change of an app's content as the live stream tells it.
type Change struct {
	Pos      int64  // the event's global position in the log
	Kind     string // "item" or "module"
	Type     string // the event's stable type, e.g. "content.item_edited"
	App      string
	Module   string
	Item     string // items only
	Revision int64  // the item's or module's revision after the change
	At       time.Time
	By       string // who made it: a display name, else the actor
}

// Kinds of Change.
const (
	ChangedItem   = "item"
	ChangedModule = "module"
)

// ChangeOf is the change a decoded content event of the log makes (ok
// false: an event the live stream does not tell, such as a name claim or
// a module type).
func ChangeOf(r event.Recorded) (Change, bool) {
	c := Change{Pos: r.Pos, Revision: r.StreamVersion - 1, At: r.RecordedAt, Type: r.Type}
	if t, ok := r.Data.(interface{ EventType() string }); ok {
		c.Type = t.EventType()
	}
	switch e := r.Data.(type) {
	case content.ModuleCreated:
		c.Kind, c.App, c.Module, c.By = ChangedModule, e.App, e.ModuleID, e.By
	case content.ModuleRenamed:
		c.Kind, c.App, c.Module, c.By = ChangedModule, e.App, e.ModuleID, e.By
	case content.ModuleConfigured:
		c.Kind, c.App, c.Module, c.By = ChangedModule, e.App, e.ModuleID, e.By
	case content.ModuleFieldsChanged:
		c.Kind, c.App, c.Module, c.By = ChangedModule, e.App, e.ModuleID, e.By
	case content.ModuleDeleted:
		c.Kind, c.App, c.Module, c.By = ChangedModule, e.App, e.ModuleID, e.By
	default:
		app, module, ok := itemPlace(r.Data)
		if !ok {
			return Change{}, false
		}
		ie := r.Data.(content.ItemEvent)
		c.Kind, c.App, c.Module, c.Item, c.By = ChangedItem, app, module, ie.Item(), ie.Author()
	}
	if c.By == "" {
		c.By = r.Meta.Actor
	}
	return c, true
}

// itemPlace is the app and module of an item event.
func itemPlace(d any) (app, module string, ok bool) {
	switch e := d.(type) {
	case content.ItemCreated:
		return e.App, e.Module, true
	case content.ItemEdited:
		return e.App, e.Module, true
	case content.ItemPublished:
		return e.App, e.Module, true
	case content.ItemUnpublished:
		return e.App, e.Module, true
	case content.ItemExpirySet:
		return e.App, e.Module, true
	case content.ItemArchived:
		return e.App, e.Module, true
	case content.ItemUnarchived:
		return e.App, e.Module, true
	case content.ItemDeleted:
		return e.App, e.Module, true
	case content.ItemRestored:
		return e.App, e.Module, true
	case content.ItemReverted:
		return e.App, e.Module, true
	}
	return "", "", false
}

// LiveFeed fans the log's content changes out to the streams of this
// process (adapters/live).
type LiveFeed interface {
	// Subscribe registers a subscriber of owner to app's changes: those
	// after the change at position after when resume is set (a client
	// reconnecting with Last-Event-ID), else those from now on. It
	// refuses a subscriber over its bounds (fault.TooManyRequests for
	// owner's, fault.Unavailable for the process's).
	Subscribe(owner, app string, after int64, resume bool) (LiveSubscription, error)
}

// LiveSubscription is one subscriber of a LiveFeed.
type LiveSubscription interface {
	// Replay is what came after the position the subscriber resumed
	// from, in log order; reset reports a position the feed cannot
	// replay from (too old, or unknown): the client must reload
	// everything.
	Replay() (changes []Change, reset bool)
	// Changes delivers the app's changes as they come, in log order. It
	// is closed when the feed stops (the server shuts down) or drops the
	// subscriber for falling too far behind (Overflowed).
	Changes() <-chan Change
	// Overflowed reports that the subscriber was dropped for falling
	// behind: the client must reload everything.
	Overflowed() bool
	// Mark is where a client that reloads everything (after a reset or
	// an overflow) resumes: the position of the newest change the feed
	// had seen then, of any app (0: none).
	Mark() int64
	// Close unsubscribes.
	Close()
}

// LiveConfig tunes the live streams.
type LiveConfig struct {
	// KeepAlive is how often an idle stream says it is alive (default
	// 15 s), so that proxies keep it open and clients notice a dead one.
	KeepAlive time.Duration
	// Recheck is how often a stream checks its caller again (default
	// 30 s): the token (expired, revoked) and the rights (the modules and
	// items they may read now).
	Recheck time.Duration
}

// Live opens the live streams of apps' content changes.
type Live struct {
	q    *Queries
	feed LiveFeed
	cfg  LiveConfig
}

// NewLive returns the live streams of q's content, fed by feed.
func NewLive(q *Queries, feed LiveFeed, cfg LiveConfig) *Live {
	if q == nil || feed == nil {
		panic("content.NewLive: nil dependency")
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = 30 * time.Second
	}
	return &Live{q: q, feed: feed, cfg: cfg}
}

// LiveRequest opens a stream.
type LiveRequest struct {
	App string
	// LastEventID is the last position the client received (the
	// Last-Event-ID header of a reconnection); "" for none.
	LastEventID string
	// Recheck authenticates the caller again (every LiveConfig.Recheck):
	// it fails once the token expired or was revoked. Nil: never.
	Recheck func(ctx context.Context) (access.Actor, error)
}

// Open authorizes the caller in ctx and subscribes them to the app's
// changes they may read. The stream is for CMS users: anonymous callers
// are unauthenticated, app tokens and identified users refused, and so
// are CMS users with no read right on the app, nor on any of its modules
// or items.
func (l *Live) Open(ctx context.Context, req LiveRequest) (*LiveStream, error) {
	if req.App == "" {
		return nil, fault.Invalidf("app is required").With("field", "app")
	}
	sc, err := l.q.liveScope(ctx, req.App)
	if err != nil {
		return nil, err
	}
	after, err := strconv.ParseInt(req.LastEventID, 10, 64)
	resume := req.LastEventID != ""
	if resume && (err != nil || after < 0) {
		after = -1 // found nowhere: the client reloads everything
	}
	sub, err := l.feed.Subscribe(access.From(ctx).ID, req.App, after, resume)
	if err != nil {
		return nil, err
	}
	return &LiveStream{live: l, app: req.App, scope: sc, sub: sub, recheck: req.Recheck}, nil
}

// LiveSink is where a stream writes (the HTTP adapter: Server-Sent
// Events).
type LiveSink interface {
	// Change tells one change.
	Change(c Change) error
	// Reset tells the client to reload everything, then to resume after
	// mark (0: from now).
	Reset(mark int64) error
	// KeepAlive says the stream is alive.
	KeepAlive() error
}

// LiveStream is one client's stream of an app's changes.
type LiveStream struct {
	live    *Live
	app     string
	scope   liveScope
	sub     LiveSubscription
	recheck func(ctx context.Context) (access.Actor, error)
}

// Close unsubscribes the stream.
func (s *LiveStream) Close() { s.sub.Close() }

// Run writes the stream to sink until ctx ends (the client left), the feed
// stops or drops it (a reset first), the caller's token or rights no
// longer hold, or a write fails (its error).
func (s *LiveStream) Run(ctx context.Context, sink LiveSink) error {
	replay, reset := s.sub.Replay()
	if reset {
		if err := sink.Reset(s.sub.Mark()); err != nil {
			return err
		}
	}
	for _, c := range replay {
		if s.scope.sees(c) {
			if err := sink.Change(c); err != nil {
				return err
			}
		}
	}
	alive, recheck := time.NewTicker(s.live.cfg.KeepAlive), time.NewTicker(s.live.cfg.Recheck)
	defer alive.Stop()
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-s.sub.Changes():
			switch {
			case !ok && s.sub.Overflowed():
				return sink.Reset(s.sub.Mark())
			case !ok:
				return nil
			case s.scope.sees(c):
				if err := sink.Change(c); err != nil {
					return err
				}
			}
		case <-alive.C:
			if err := sink.KeepAlive(); err != nil {
				return err
			}
		case <-recheck.C:
			if !s.stillAllowed(ctx) {
				return nil
			}
		}
	}
}

// stillAllowed checks the caller again: their token, then what they may
// read now (the new scope replaces the old). A failure of either ends the
// stream: the client reconnects and meets the refusal, if any.
func (s *LiveStream) stillAllowed(ctx context.Context) bool {
	if s.recheck != nil {
		a, err := s.recheck(ctx)
		if err != nil {
			return false
		}
		ctx = access.WithActor(ctx, a)
	}
	sc, err := s.live.q.liveScope(ctx, s.app)
	if err != nil {
		return false
	}
	s.scope = sc
	return true
}

// liveScope is which changes of an app a caller may follow: all of them,
// or those of the modules and items they hold the read right on (a right
// on an item shows its module's changes too, as it shows the module).
type liveScope struct {
	all         bool
	modules     map[string]bool
	items       map[string]bool
	itemModules map[string]bool
}

// sees reports whether the scope shows c.
func (sc liveScope) sees(c Change) bool {
	if sc.all || sc.modules[c.Module] {
		return true
	}
	if c.Kind == ChangedModule {
		return sc.itemModules[c.Module]
	}
	return sc.items[c.Item]
}

// liveScope reads which changes of app the actor in ctx may follow.
func (q *Queries) liveScope(ctx context.Context, app string) (liveScope, error) {
	a := access.From(ctx)
	switch {
	case a.Kind == access.Anonymous:
		return liveScope{}, access.ErrUnauthenticated
	case a.IsAdmin():
		return liveScope{all: true}, nil
	case a.Kind != access.User:
		return liveScope{}, fault.Forbiddenf("the live stream of content changes is for CMS users").With("permission", "read")
	}
	rs, err := q.authz.Of(ctx, a.ID, app)
	if err != nil {
		return liveScope{}, err
	}
	sc, err := q.scopeOf(ctx, rs)
	if err != nil {
		return liveScope{}, err
	}
	if len(sc.apps) > 0 {
		return liveScope{all: true}, nil
	}
	if len(sc.modules) == 0 && len(sc.items) == 0 {
		return liveScope{}, fault.Forbiddenf("read permission on this app, or on a module or an item of it, is required").
			With("permission", "read")
	}
	ls := liveScope{modules: idSet(sc.modules), items: idSet(sc.items), itemModules: idSet(sc.itemModules)}
	return ls, nil
}

func idSet(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Package audit answers auditors' questions by replaying the event log
// itself, never a projection: what was granted and revoked, by whom, when,
// from where, and what a user could do at any moment.
package audit

import (
	"context"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// StreamReader reads one stream of the event log.
type StreamReader interface {
	ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error)
}

// Authorizer checks the auditor's own right to look: on a resource, or
// (AuthorizeAnyApp) on some app at all.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnyApp(ctx context.Context, actor access.Actor, p rights.Permission) error
}

// Auditor replays histories.
type Auditor struct {
	log     StreamReader
	authz   Authorizer
	loyalty LoyaltyReadModel
}

// New returns an auditor reading log; loyalty is the loyalty read model a
// loyalty audit compares its replay with.
func New(log StreamReader, authz Authorizer, loyalty LoyaltyReadModel) *Auditor {
	if log == nil || authz == nil || loyalty == nil {
		panic("audit.New: nil dependency")
	}
	return &Auditor{log: log, authz: authz, loyalty: loyalty}
}

// RightsQuery selects a user's rights history: optionally one app, up to
// a moment (zero: now).
type RightsQuery struct {
	User string
	App  string
	At   time.Time
}

// RightsChange is one grant or revoke as recorded.
type RightsChange struct {
	EventID     string
	Position    event.Position
	RecordedAt  time.Time
	Action      string // "grant" or "revoke"
	App         string
	Scope       rights.Scope
	Permissions []string
	By          string
	ClientIP    string
	Correlation string
}

// RightsReport is the chronological history and the effective rights at
// the query's moment.
type RightsReport struct {
	User      string
	App       string
	At        time.Time
	Changes   []RightsChange
	Effective []rights.Entry
}

// Rights replays a user's rights stream. Admins may audit anyone; a user
// holding the manage permission on an app may audit that app.
func (a *Auditor) Rights(ctx context.Context, q RightsQuery) (RightsReport, error) {
	actor := access.From(ctx)
	// Who may ask comes first: a caller who may not learns nothing of
	// the query's faults.
	if !actor.IsAdmin() {
		if actor.Kind == access.Anonymous {
			return RightsReport{}, access.ErrUnauthenticated
		}
		if q.App == "" {
			return RightsReport{}, fault.Forbiddenf("only administrators may audit rights across apps; give app")
		}
		if err := a.authz.Authorize(ctx, actor, rights.Manage, rights.Resource{App: q.App}); err != nil {
			return RightsReport{}, err
		}
	}
	if q.User == "" {
		return RightsReport{}, fault.Invalidf("user is required").With("field", "user")
	}
	at := q.At
	if at.IsZero() {
		at = time.Now()
	}
	recs, err := a.log.ReadStream(ctx, rights.Stream(q.User), 0)
	if err != nil {
		return RightsReport{}, err
	}
	rep := RightsReport{User: q.User, App: q.App, At: at, Changes: []RightsChange{}}
	state := rights.NewRights(q.User)
	for _, r := range recs {
		if r.RecordedAt.After(at) {
			break
		}
		var c RightsChange
		switch e := r.Data.(type) {
		case rights.Granted:
			c = RightsChange{Action: "grant", App: e.AppID, Permissions: e.Permissions, By: e.By}
			c.Scope = scopeOf(e.ScopeKind, e.ScopeID)
		case rights.Revoked:
			c = RightsChange{Action: "revoke", App: e.AppID, Permissions: e.Permissions, By: e.By}
			c.Scope = scopeOf(e.ScopeKind, e.ScopeID)
		default:
			continue
		}
		state = state.Apply(r.Data)
		if q.App != "" && c.App != q.App {
			continue
		}
		c.EventID, c.Position, c.RecordedAt = r.Meta.EventID, r.Position, r.RecordedAt
		c.ClientIP, c.Correlation = r.Meta.ClientIP, r.Meta.CorrelationID
		if c.By == "" {
			c.By = r.Meta.Actor
		}
		rep.Changes = append(rep.Changes, c)
	}
	rep.Effective = state.List(q.App)
	return rep, nil
}

func scopeOf(kind, id string) rights.Scope {
	k, _ := rights.ParseScopeKind(kind)
	return rights.Scope{Kind: k, ID: id}
}

// Package access describes who is acting: a CMS user, an app (client
// credentials) or the system itself. The HTTP adapter puts the actor in the
// request context; command and query handlers authorize against it.
package access

import (
	"context"

	"github.com/halocms/halocms/domain/fault"
)

// Kind of actor.
type Kind int

const (
	Anonymous  Kind = iota
	User            // a CMS user (password grant)
	App             // an app's client credentials
	System          // the server itself (bootstrap, CLI)
	Identified      // an identified app user, signed in through an app
)

// Actor is the authenticated caller of a command or query.
type Actor struct {
	Kind          Kind
	ID            string // user id, app id or identified user id
	App           string // the app of an app token or an identified user's token
	Admin         bool   // CMS admin flag (users only)
	Name          string // display name as authentication read it (users only; "" if not read)
	ClientIP      string
	CorrelationID string
}

// IsAdmin reports whether the actor may do anything: admins and the system.
func (a Actor) IsAdmin() bool { return a.Kind == System || (a.Kind == User && a.Admin) }

// Label is how the actor appears in event metadata: "user:<id>",
// "app:<id>" or "system".
func (a Actor) Label() string {
	switch a.Kind {
	case User:
		return "user:" + a.ID
	case App:
		return "app:" + a.ID
	case Identified:
		return "identified:" + a.ID
	case System:
		return "system"
	}
	return "anonymous"
}

// ClientApp returns the app whose credentials the actor acts through: an
// app token's app, or the app an identified user signed in through; ""
// for everyone else. Such actors read what their app's token reads.
func (a Actor) ClientApp() string {
	switch a.Kind {
	case App:
		if a.App != "" {
			return a.App
		}
		return a.ID
	case Identified:
		return a.App
	}
	return ""
}

// SystemActor acts for the server itself (first admin, CLI).
var SystemActor = Actor{Kind: System}

type ctxKey struct{}

// WithActor returns ctx carrying the actor.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// From returns the actor in ctx (Anonymous if none).
func From(ctx context.Context) Actor {
	a, _ := ctx.Value(ctxKey{}).(Actor)
	return a
}

// ErrUnauthenticated is returned when an operation needs a signed-in
// caller and has none.
var ErrUnauthenticated = fault.New(fault.Unauthenticated, "authentication required")

// RequireAdmin refuses everyone but admins.
func RequireAdmin(a Actor) error {
	if a.Kind == Anonymous {
		return ErrUnauthenticated
	}
	if !a.IsAdmin() {
		return fault.Forbiddenf("only administrators may do this")
	}
	return nil
}

// CMSUser returns the actor in ctx when it is a CMS user or the system.
// Anyone else is refused: anonymous callers with ErrUnauthenticated (401),
// app tokens and app users' tokens with refusal (a 403 saying what they
// may not do, and whose token to use instead).
func CMSUser(ctx context.Context, refusal *fault.Error) (Actor, error) {
	a := From(ctx)
	switch a.Kind {
	case Anonymous:
		return a, ErrUnauthenticated
	case User, System:
		return a, nil
	}
	return a, refusal
}

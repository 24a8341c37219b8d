package rights

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// List returns a user's effective rights (the caller's when user is
// empty), on one app or every app, and whose they are. Users may list
// their own; admins anyone's; managers of an app anyone's on that app.
func (a *Authorizer) List(ctx context.Context, user, app string) (string, []Right, error) {
	actor := access.From(ctx)
	if user == "" {
		user = actor.ID
	}
	if !(actor.Kind == access.User && user == actor.ID) && !actor.IsAdmin() {
		if app == "" {
			return user, nil, fault.Forbiddenf("give app to list another user's rights on it")
		}
		if err := a.Authorize(ctx, actor, rights.Manage, rights.Resource{App: app}); err != nil {
			return user, nil, err
		}
	}
	rs, err := a.Of(ctx, user, app)
	return user, rs, err
}

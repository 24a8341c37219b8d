// Package rights holds the grant and revoke commands.
package rights

import (
	"context"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
)

// Authorizer answers whether an actor holds a permission on a resource.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
}

// Projections the rights commands' callers read next.
var Projections = []string{"rights"}

// Service runs grant and revoke.
type Service struct {
	store commands.EventStore
	authz Authorizer
	wait  commands.Waiter
}

// NewService wires the service; every dependency is required.
func NewService(store commands.EventStore, authz Authorizer, wait commands.Waiter) *Service {
	if store == nil || authz == nil || wait == nil {
		panic("rights.NewService: nil dependency")
	}
	return &Service{store: store, authz: authz, wait: wait}
}

// Change is the input of Grant and Revoke, as the API receives it.
type Change struct {
	User        string
	App         string
	Module      string
	Item        string
	Permissions []string
}

// Result is a user's rights on the app after the change.
type Result struct {
	User    string
	App     string
	Changed bool
	Rights  []rights.Entry
}

// Grant adds permissions to a user's right at a scope.
func (s *Service) Grant(ctx context.Context, c Change) (Result, error) {
	return s.change(ctx, c, true, rights.Rights.Grant)
}

// Revoke removes permissions from exactly the given scope (whatever it
// names, so that any right can be taken back).
func (s *Service) Revoke(ctx context.Context, c Change) (Result, error) {
	return s.change(ctx, c, false, rights.Rights.Revoke)
}

// inApp checks that a module or item scope names a live module, or an
// item, of app.
func (s *Service) inApp(ctx context.Context, scope rights.Scope, app string) error {
	switch scope.Kind {
	case rights.ModuleScope:
		m, _, err := commands.Load(ctx, s.store, content.ModuleStream(scope.ID), content.Module{}, content.Module.Apply)
		if err != nil {
			return err
		}
		if !m.Exists() || m.Deleted || m.App != app {
			return fault.NotFoundf("module %s not found in app %s", scope.ID, app).With("field", "module")
		}
	case rights.ItemScope:
		i, _, err := commands.Load(ctx, s.store, content.ItemStream(scope.ID), content.Item{}, content.Item.Apply)
		if err != nil {
			return err
		}
		if !i.Exists() || i.App != app {
			return fault.NotFoundf("item %s not found in app %s", scope.ID, app).With("field", "item")
		}
	}
	return nil
}

func (s *Service) change(ctx context.Context, c Change, grant bool, decide func(rights.Rights, rights.Change) ([]any, error)) (Result, error) {
	actor := access.From(ctx)
	if actor.Kind == access.Anonymous {
		return Result{}, access.ErrUnauthenticated
	}
	if c.User == "" {
		return Result{}, fault.Invalidf("user is required").With("field", "user")
	}
	if c.App == "" {
		return Result{}, fault.Invalidf("app is required").With("field", "app")
	}
	// Only admins, or holders of the manage permission on the app.
	if !actor.IsAdmin() {
		if actor.Kind != access.User {
			return Result{}, fault.Forbiddenf("only CMS users may manage rights")
		}
		if err := s.authz.Authorize(ctx, actor, rights.Manage, rights.Resource{App: c.App}); err != nil {
			return Result{}, err
		}
	}
	scope, err := rights.NewScope(c.Module, c.Item)
	if err != nil {
		return Result{}, err
	}
	perms := make([]rights.Permission, 0, len(c.Permissions))
	for _, n := range c.Permissions {
		p, err := rights.ParsePermission(n)
		if err != nil {
			return Result{}, err
		}
		perms = append(perms, p)
	}
	// The user and the app must exist.
	u, _, err := commands.Load(ctx, s.store, identity.UserStream(c.User), identity.User{}, identity.User.Apply)
	if err != nil {
		return Result{}, err
	}
	if !u.Exists() {
		return Result{}, fault.NotFoundf("user %s not found", c.User).With("field", "user")
	}
	a, _, err := commands.Load(ctx, s.store, identity.AppStream(c.App), identity.App{}, identity.App.Apply)
	if err != nil {
		return Result{}, err
	}
	if !a.Exists() {
		return Result{}, fault.Invalidf("app %s not found", c.App).With("field", "app")
	}
	if grant {
		// A right on a module or an item covers it only inside the app: one
		// that names another app's module or item would be given by a
		// manager of the wrong app (readers ignore such rights too).
		if err := s.inApp(ctx, scope, c.App); err != nil {
			return Result{}, err
		}
	}
	change := rights.Change{App: c.App, Scope: scope, Permissions: perms, By: actor.Label()}
	st, res, err := commands.Update(ctx, s.store, rights.Stream(c.User), c.App, rights.NewRights(c.User), rights.Rights.Apply,
		func(r rights.Rights) ([]any, error) { return decide(r, change) })
	if err != nil {
		return Result{}, err
	}
	changed := !res.Last.IsZero()
	if changed {
		s.wait.WaitFor(ctx, res.Last, Projections...)
	}
	return Result{User: c.User, App: c.App, Changed: changed, Rights: st.List(c.App)}, nil
}

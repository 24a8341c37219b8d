// Package appuser holds the commands of the app-user context: registering
// and updating app users (the devices of an app), dropping dead push
// tokens, signing identified users up and in, and writing their pockets.
// Each loads its stream(s), authorizes, decides and appends.
package appuser

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
)

// IDs generates identifiers (tag ids and app user ids).
type IDs interface{ NewID() string }

// AppUsers finds app users by alias (the read model): login links the
// device whose alias the SDK sends. fault.NotFound when there is none.
type AppUsers interface {
	AppUserIDByAlias(ctx context.Context, app, alias string) (string, error)
}

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{"appusers"}

// Service runs the app-user commands.
type Service struct {
	store     commands.EventStore
	ids       IDs
	users     AppUsers
	passwords Passwords
	throttle  Throttle
	tokens    Tokens
	wait      commands.Waiter
}

// NewService wires the service; every dependency is required.
func NewService(store commands.EventStore, ids IDs, users AppUsers, passwords Passwords, throttle Throttle, tokens Tokens, wait commands.Waiter) *Service {
	if store == nil || ids == nil || users == nil || passwords == nil || throttle == nil || tokens == nil || wait == nil {
		panic("appuser.NewService: nil dependency")
	}
	return &Service{store: store, ids: ids, users: users, passwords: passwords, throttle: throttle, tokens: tokens, wait: wait}
}

func applyUser(u appuser.AppUser, ev any) appuser.AppUser { return u.Apply(ev) }

func (s *Service) settle(ctx context.Context, pos event.Position) {
	if !pos.IsZero() {
		s.wait.WaitFor(ctx, pos, Projections...)
	}
}

// randomName is prefix and 26 random lower-case letters and digits (130
// bits from crypto/rand), as HALO's aliases and identified ids look.
func randomName(prefix string) string { return prefix + strings.ToLower(rand.Text()) }

// writer says whose app users the actor may write: those of its token's
// app (app tokens and identified users), or any (admins and the system).
func writer(a access.Actor) (app string, anyApp bool, err error) {
	switch {
	case a.Kind == access.Anonymous:
		return "", false, access.ErrUnauthenticated
	case a.IsAdmin():
		return "", true, nil
	case a.ClientApp() != "":
		return a.ClientApp(), false, nil
	}
	return "", false, fault.Forbiddenf("app users are registered and changed by apps")
}

// CheckWriter returns the refusal the caller gets from Create and Update
// whatever the request holds (nil: it may write some app users). Handlers
// put it before a request's own faults, so that a CMS user, who may write
// none, learns nothing from a body or an id.
func CheckWriter(a access.Actor) error {
	_, _, err := writer(a)
	return err
}

// Create registers an app user of app with a new server-generated alias.
// App tokens and identified users register app users of their own app;
// admins of any existing app.
func (s *Service) Create(ctx context.Context, app string, p appuser.Profile) (appuser.AppUser, error) {
	mine, anyApp, err := writer(access.From(ctx))
	if err != nil {
		return appuser.AppUser{}, err
	}
	switch {
	case app == "":
		return appuser.AppUser{}, fault.Invalidf("the app is required").With("field", "appId")
	case !anyApp && app != mine:
		return appuser.AppUser{}, fault.Forbiddenf("an app registers app users of its own only")
	case anyApp:
		a, _, err := commands.Load(ctx, s.store, identity.AppStream(app), identity.App{}, func(a identity.App, ev any) identity.App { return a.Apply(ev) })
		if err != nil {
			return appuser.AppUser{}, err
		}
		if !a.Exists() {
			return appuser.AppUser{}, fault.Invalidf("app %s not found", app).With("field", "appId")
		}
	}
	id := s.ids.NewID()
	evs, err := appuser.Create(appuser.AppUser{}, id, app, randomName(appuser.AliasPrefix), p, s.ids.NewID)
	if err != nil {
		return appuser.AppUser{}, err
	}
	res, err := s.store.Append(ctx, appuser.Stream(id), event.NoStream, commands.WithApp(commands.Wrap(ctx, evs...), app)...)
	if err != nil {
		return appuser.AppUser{}, fmt.Errorf("append %s: %w", appuser.Stream(id), err)
	}
	s.settle(ctx, res.Last)
	return fold(appuser.AppUser{}, evs), nil
}

func fold(u appuser.AppUser, evs []any) appuser.AppUser {
	for _, e := range evs {
		u = u.Apply(e)
	}
	return u
}

// visible refuses an app user the actor may not write: another app's app
// user is fault.NotFound, like an unknown or deleted one (its existence is
// not told).
func visible(u appuser.AppUser, mine string, anyApp bool) error {
	if !u.Live() || (!anyApp && u.App != mine) {
		return fault.NotFoundf("app user not found")
	}
	return nil
}

// Update replaces an app user's email, tags and devices (replaceTokens) or
// merges the sent devices in (see appuser.AppUser.Update).
func (s *Service) Update(ctx context.Context, id string, p appuser.Profile, replaceTokens bool) (appuser.AppUser, error) {
	mine, anyApp, err := writer(access.From(ctx))
	if err != nil {
		return appuser.AppUser{}, err
	}
	u, res, err := s.change(ctx, id, func(u appuser.AppUser) ([]any, error) {
		if err := visible(u, mine, anyApp); err != nil {
			return nil, err
		}
		return u.Update(p, replaceTokens, s.ids.NewID)
	})
	if err != nil {
		return appuser.AppUser{}, err
	}
	s.settle(ctx, res.Last)
	return u, nil
}

// change loads an app user, asks decide for events and appends them with
// the version it read (and the app user's app in their metadata),
// retrying from a fresh load on a version conflict.
func (s *Service) change(ctx context.Context, id string, decide func(appuser.AppUser) ([]any, error)) (appuser.AppUser, event.AppendResult, error) {
	u, res, err := commands.Change(ctx, s.store, appuser.Stream(id), appuser.AppUser{}, applyUser,
		func(u appuser.AppUser) string { return u.App }, decide)
	if err != nil {
		return u, res, conflict(err)
	}
	return u, res, nil
}

// Reasons recorded with a removed token.
const ReasonInvalidToken = "invalid_token"

// RemoveToken drops a push token of an app user of app, for example when
// the push provider reports it invalid. Removing a token that is already
// gone records nothing and is not an error; an unknown app user (or one of
// another app) is fault.NotFound. The system, admins and the app's own
// tokens may do it; it does not wait for the read model.
func (s *Service) RemoveToken(ctx context.Context, app, appUserID, token string) error {
	mine, anyApp, err := writer(access.From(ctx))
	if err != nil {
		return err
	}
	if !anyApp && app != mine {
		return fault.NotFoundf("app user not found")
	}
	_, _, err = s.change(ctx, appUserID, func(u appuser.AppUser) ([]any, error) {
		if !u.Exists() || u.App != app {
			return nil, fault.NotFoundf("app user not found")
		}
		return u.RemoveToken(token, ReasonInvalidToken), nil
	})
	return err
}

// Delete deletes an app user (admins only): it reaches nothing from then
// on and reads as unknown.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return err
	}
	_, res, err := s.change(ctx, id, func(u appuser.AppUser) ([]any, error) { return u.Delete() })
	if err != nil {
		return err
	}
	s.settle(ctx, res.Last)
	return nil
}

func conflict(err error) error {
	if errors.Is(err, event.ErrVersionConflict) {
		return fault.Conflictf("changed concurrently; try again")
	}
	return err
}

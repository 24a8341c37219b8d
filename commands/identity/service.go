// Package identity holds the commands on CMS users and apps.
package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
)

// PasswordHasher hashes passwords with an adaptive algorithm.
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(hash, password string) bool
	// HashSecret hashes a random, high-entropy client secret: a fast hash
	// suffices and keeps the SDKs' frequent client_credentials sign-ins
	// cheap.
	HashSecret(secret string) string
}

// IDs generates identifiers and secrets.
type IDs interface {
	NewID() string
	NewSecret() string
}

// TokenRevoker ends a user's sessions.
type TokenRevoker interface {
	RevokeSubject(ctx context.Context, kind, id string) error
}

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{"identity"}

// Service runs the identity commands.
type Service struct {
	store  commands.EventStore
	hasher PasswordHasher
	ids    IDs
	wait   commands.Waiter
	tokens TokenRevoker
}

// NewService wires the service; every dependency is required.
func NewService(store commands.EventStore, hasher PasswordHasher, ids IDs, wait commands.Waiter, tokens TokenRevoker) *Service {
	if store == nil || hasher == nil || ids == nil || wait == nil || tokens == nil {
		panic("identity.NewService: nil dependency")
	}
	return &Service{store: store, hasher: hasher, ids: ids, wait: wait, tokens: tokens}
}

func applyUser(u identity.User, ev any) identity.User         { return u.Apply(ev) }
func applyName(n identity.Username, ev any) identity.Username { return n.Apply(ev) }
func applyApp(a identity.App, ev any) identity.App            { return a.Apply(ev) }

// CreateUser is the input of Service.CreateUser.
type CreateUser struct {
	Username   string
	Password   string
	Email      string
	Name       string
	Admin      bool
	AllowedIPs []string
}

// CreateUser creates a CMS user (admins only) and returns it.
func (s *Service) CreateUser(ctx context.Context, c CreateUser) (identity.User, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return identity.User{}, err
	}
	if err := identity.ValidatePassword(c.Password); err != nil {
		return identity.User{}, err
	}
	if err := identity.ValidateUsername(c.Username); err != nil {
		return identity.User{}, err
	}
	hash, err := s.hasher.Hash(c.Password)
	if err != nil {
		return identity.User{}, err
	}
	id := s.ids.NewID()
	created, err := identity.CreateUser(identity.User{}, identity.NewUser{ID: id, Username: c.Username,
		Email: c.Email, Name: c.Name, PasswordHash: hash, Admin: c.Admin, AllowedIPs: c.AllowedIPs})
	if err != nil {
		return identity.User{}, err
	}
	nameStream := identity.UsernameStream(c.Username)
	name, nameVersion, err := commands.Load(ctx, s.store, nameStream, identity.Username{}, applyName)
	if err != nil {
		return identity.User{}, err
	}
	claim, err := name.Claim(c.Username, id)
	if err != nil {
		return identity.User{}, err
	}
	res, err := s.store.AppendMulti(ctx,
		event.StreamAppend{Stream: nameStream, ExpectedVersion: nameVersion, Events: commands.Wrap(ctx, claim)},
		event.StreamAppend{Stream: identity.UserStream(id), ExpectedVersion: event.NoStream, Events: commands.Wrap(ctx, created)},
	)
	if errors.Is(err, event.ErrVersionConflict) {
		return identity.User{}, fault.Conflictf("username %q is taken", c.Username).With("field", "username")
	}
	if err != nil {
		return identity.User{}, err
	}
	s.wait.WaitFor(ctx, res.Last, Projections...)
	return identity.User{}.Apply(created), nil
}

// UpdateUser is the input of Service.UpdateUser; nil fields stay unchanged.
type UpdateUser struct {
	ID       string
	Username *string
	Password *string
	// CurrentPassword must accompany Password when users change their own
	// password: a stolen access token alone cannot take the account over.
	CurrentPassword *string
	Email           *string
	Name            *string
	Admin           *bool
	AllowedIPs      *[]string
	Disabled        *bool
}

// UpdateUser changes a user. Admins may change everything; a user may
// change their own username, name, email and password (not the admin flag,
// allowlist or disabled state).
func (s *Service) UpdateUser(ctx context.Context, c UpdateUser) (identity.User, error) {
	actor := access.From(ctx)
	if !actor.IsAdmin() && (actor.Kind != access.User || actor.ID != c.ID) {
		if err := access.RequireAdmin(actor); err != nil {
			return identity.User{}, err
		}
	}
	ch := identity.UserChanges{Username: c.Username, Email: c.Email, Name: c.Name, Admin: c.Admin,
		AllowedIPs: c.AllowedIPs, Disabled: c.Disabled}
	if c.Password != nil {
		if err := identity.ValidatePassword(*c.Password); err != nil {
			return identity.User{}, err
		}
		h, err := s.hasher.Hash(*c.Password)
		if err != nil {
			return identity.User{}, err
		}
		ch.PasswordHash = &h
	}
	var current *string
	if c.Password != nil && actor.Kind == access.User && actor.ID == c.ID {
		if c.CurrentPassword == nil || *c.CurrentPassword == "" {
			return identity.User{}, fault.Invalidf("currentPassword is required to change your own password").With("field", "currentPassword")
		}
		current = c.CurrentPassword
	}
	var u identity.User
	err := commands.Retry{}.Run(ctx, func(int) error {
		var err error
		u, err = s.updateUserOnce(ctx, c.ID, ch, current)
		return err
	})
	if errors.Is(err, event.ErrVersionConflict) {
		return u, fault.Conflictf("user changed concurrently; try again")
	}
	return u, err
}

func (s *Service) updateUserOnce(ctx context.Context, id string, ch identity.UserChanges, currentPassword *string) (identity.User, error) {
	stream := identity.UserStream(id)
	u, version, err := commands.Load(ctx, s.store, stream, identity.User{}, applyUser)
	if err != nil {
		return u, err
	}
	if currentPassword != nil && u.Exists() && !s.hasher.Verify(u.PasswordHash, *currentPassword) {
		return u, fault.Forbiddenf("currentPassword is wrong").With("field", "currentPassword")
	}
	evs, err := u.Update(ch)
	if err != nil || len(evs) == 0 {
		return u, err
	}
	actor := access.From(ctx)
	for _, e := range evs {
		switch e.(type) {
		case identity.UserAdminChanged, identity.UserAllowedIPsChanged, identity.UserDisabled, identity.UserEnabled:
			// A user may echo their own record back, but only admins
			// change these.
			if !actor.IsAdmin() {
				return u, fault.Forbiddenf("only administrators may change admin, allowedIps or disabled")
			}
		}
		switch e.(type) {
		case identity.UserAdminChanged, identity.UserDisabled:
			if actor.Kind == access.User && actor.ID == id {
				return u, fault.Invalidf("administrators cannot remove their own admin flag or disable themselves")
			}
		}
	}
	appends := []event.StreamAppend{{Stream: stream, ExpectedVersion: version, Events: commands.Wrap(ctx, evs...)}}
	for _, e := range evs {
		r, ok := e.(identity.UserRenamed)
		if !ok {
			continue
		}
		// A rename moves the reservation: claim the new name, release the old.
		newStream := identity.UsernameStream(r.Username)
		n, nv, err := commands.Load(ctx, s.store, newStream, identity.Username{}, applyName)
		if err != nil {
			return u, err
		}
		claim, err := n.Claim(r.Username, id)
		if err != nil {
			return u, err
		}
		oldStream := identity.UsernameStream(u.Username)
		_, ov, err := commands.Load(ctx, s.store, oldStream, identity.Username{}, applyName)
		if err != nil {
			return u, err
		}
		appends = append(appends, event.StreamAppend{Stream: newStream, ExpectedVersion: nv, Events: commands.Wrap(ctx, claim)})
		if oldStream != newStream {
			appends = append(appends, event.StreamAppend{Stream: oldStream, ExpectedVersion: ov,
				Events: commands.Wrap(ctx, identity.UsernameReleased{Username: u.Username, UserID: id})})
		}
	}
	res, err := s.store.AppendMulti(ctx, appends...)
	if err != nil {
		return u, err
	}
	revoke := false
	for _, e := range evs {
		u = u.Apply(e)
		switch e.(type) {
		case identity.UserPasswordChanged, identity.UserDisabled:
			revoke = true
		}
	}
	if !revoke {
		s.wait.WaitFor(ctx, res.Last, Projections...)
		return u, nil
	}
	// A new password or a disabled account ends every session: at once,
	// and again once sign-in (which reads the identity projection) can no
	// longer accept the old password or the disabled account.
	if err := s.tokens.RevokeSubject(ctx, "user", id); err != nil {
		return u, fmt.Errorf("revoking sessions of user %s: %w", id, err)
	}
	s.wait.WaitFor(ctx, res.Last, Projections...)
	if err := s.tokens.RevokeSubject(ctx, "user", id); err != nil {
		return u, fmt.Errorf("revoking sessions of user %s: %w", id, err)
	}
	return u, nil
}

// CreatedApp is an app with its client secret, shown only once.
type CreatedApp struct {
	identity.App
	ClientSecret string
}

// CreateApp creates an app (admins only).
func (s *Service) CreateApp(ctx context.Context, name string) (CreatedApp, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return CreatedApp{}, err
	}
	id := s.ids.NewID()
	clientID := "app-" + id
	secret := s.ids.NewSecret()
	hash := s.hasher.HashSecret(secret)
	created, err := identity.CreateApp(identity.App{}, id, name, clientID, hash)
	if err != nil {
		return CreatedApp{}, err
	}
	res, err := s.store.Append(ctx, identity.AppStream(id), event.NoStream, commands.WithApp(commands.Wrap(ctx, created), id)...)
	if err != nil {
		return CreatedApp{}, err
	}
	s.wait.WaitFor(ctx, res.Last, Projections...)
	return CreatedApp{App: identity.App{}.Apply(created), ClientSecret: secret}, nil
}

// RenameApp changes an app's name (admins only).
func (s *Service) RenameApp(ctx context.Context, id, name string) (identity.App, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return identity.App{}, err
	}
	a, res, err := commands.Update(ctx, s.store, identity.AppStream(id), id, identity.App{}, applyApp,
		func(a identity.App) ([]any, error) { return a.Rename(name) })
	if err != nil {
		return a, err
	}
	s.wait.WaitFor(ctx, res.Last, Projections...)
	return a, nil
}

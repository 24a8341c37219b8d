// Package identity answers queries on CMS users and apps from the identity
// projection's tables.
package identity

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
)

// User is a CMS user as the API shows it (never with a password hash).
type User struct {
	ID         string
	Username   string
	Email      string
	Name       string
	Admin      bool
	AllowedIPs []string
	Disabled   bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// App is an app as the API shows it (never with its secret).
type App struct {
	ID        string
	Name      string
	ClientID  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Store queries the identity read model.
type Store struct{ pool *pgxpool.Pool }

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const userCols = `id, username, email, name, admin, allowed_ips, disabled, created_at, updated_at`

func scanUser(row pgx.Row, extra ...any) (User, error) {
	var u User
	dest := append([]any{&u.ID, &u.Username, &u.Email, &u.Name, &u.Admin, &u.AllowedIPs, &u.Disabled, &u.CreatedAt, &u.UpdatedAt}, extra...)
	err := row.Scan(dest...)
	return u, err
}

// User returns one user. Admins may read anyone; users themselves.
func (s *Store) User(ctx context.Context, id string) (User, error) {
	a := access.From(ctx)
	if !a.IsAdmin() && !(a.Kind == access.User && a.ID == id) {
		if err := access.RequireAdmin(a); err != nil {
			return User{}, err
		}
	}
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+` FROM identity_users WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, fault.NotFoundf("user %s not found", id)
	}
	return u, err
}

// Users lists every user (admins only), by username.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+userCols+` FROM identity_users ORDER BY lower(username), id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// CredentialsByUsername finds a user for sign-in (case-insensitive). It is
// not an API query: only the token service calls it.
func (s *Store) CredentialsByUsername(ctx context.Context, username string) (identity.Credentials, error) {
	var hash string
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+`, password_hash FROM identity_users
		WHERE lower(username) = lower($1) ORDER BY id LIMIT 1`, username), &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Credentials{}, fault.NotFoundf("user not found")
	}
	return credentials(u, hash), err
}

// CredentialsByID finds a user by id, for token checks.
func (s *Store) CredentialsByID(ctx context.Context, id string) (identity.Credentials, error) {
	var hash string
	u, err := scanUser(s.pool.QueryRow(ctx, `SELECT `+userCols+`, password_hash FROM identity_users WHERE id = $1`, id), &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Credentials{}, fault.NotFoundf("user not found")
	}
	return credentials(u, hash), err
}

func credentials(u User, passwordHash string) identity.Credentials {
	name := u.Name
	if name == "" {
		name = u.Username
	}
	return identity.Credentials{ID: u.ID, Admin: u.Admin, Disabled: u.Disabled, AllowedIPs: u.AllowedIPs,
		PasswordHash: passwordHash, Name: name}
}

const appCols = `id, name, client_id, created_at, updated_at`

func scanApp(row pgx.Row, extra ...any) (App, error) {
	var a App
	err := row.Scan(append([]any{&a.ID, &a.Name, &a.ClientID, &a.CreatedAt, &a.UpdatedAt}, extra...)...)
	return a, err
}

// AppVisibility tells which apps a caller may see.
type AppVisibility interface {
	// VisibleApps returns the ids of apps the actor holds any right on;
	// all is true for admins.
	VisibleApps(ctx context.Context, actor access.Actor) (ids []string, all bool, err error)
}

// Apps lists the apps the caller may see: all for admins, the apps a user
// holds any right on, an app's own record for an app token.
func (s *Store) Apps(ctx context.Context, vis AppVisibility) ([]App, error) {
	a := access.From(ctx)
	if a.Kind == access.Anonymous {
		return nil, access.ErrUnauthenticated
	}
	var rows pgx.Rows
	var err error
	switch {
	case a.IsAdmin():
		rows, err = s.pool.Query(ctx, `SELECT `+appCols+` FROM identity_apps ORDER BY name, id`)
	case a.ClientApp() != "":
		rows, err = s.pool.Query(ctx, `SELECT `+appCols+` FROM identity_apps WHERE id = $1`, a.ClientApp())
	default:
		ids, _, verr := vis.VisibleApps(ctx, a)
		if verr != nil {
			return nil, verr
		}
		rows, err = s.pool.Query(ctx, `SELECT `+appCols+` FROM identity_apps WHERE id = ANY($1) ORDER BY name, id`, ids)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []App{}
	for rows.Next() {
		app, err := scanApp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, app)
	}
	return out, rows.Err()
}

// AppCredentialsByClientID finds an app for the client_credentials grant.
func (s *Store) AppCredentialsByClientID(ctx context.Context, clientID string) (identity.AppCredentials, error) {
	var hash string
	app, err := scanApp(s.pool.QueryRow(ctx, `SELECT `+appCols+`, client_secret_hash FROM identity_apps WHERE client_id = $1`, clientID), &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.AppCredentials{}, fault.NotFoundf("app not found")
	}
	return identity.AppCredentials{ID: app.ID, SecretHash: hash}, err
}

// AnyUser reports whether at least one CMS user exists in the log (not the
// read model: it is used at first start, before projections caught up).
func (s *Store) AnyUser(ctx context.Context) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM streams WHERE stream_id LIKE 'cmsuser-%')`).Scan(&ok)
	return ok, err
}

// DisplayName is how an actor is shown in createdBy/updatedBy: a user's
// name (or username), an app's name, "System" for the server itself.
func (s *Store) DisplayName(ctx context.Context, a access.Actor) (string, error) {
	var name string
	var err error
	switch a.Kind {
	case access.User:
		if a.Name != "" { // read with the token, in this request
			return a.Name, nil
		}
		err = s.pool.QueryRow(ctx, `SELECT coalesce(nullif(name, ''), username) FROM identity_users WHERE id = $1`, a.ID).Scan(&name)
	case access.App:
		err = s.pool.QueryRow(ctx, `SELECT name FROM identity_apps WHERE id = $1`, a.ID).Scan(&name)
	case access.System:
		return "System", nil
	default:
		return "", nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return a.Label(), nil
	}
	return name, err
}

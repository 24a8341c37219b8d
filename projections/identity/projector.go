// Package identity projects CMS users and apps into read-model tables.
package identity

import (
	"context"
	"fmt"
	"strings"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/projections"
)

// Projector writes identity_users and identity_apps.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the identity context's events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "identity.") }

func (Projector) Name() string     { return "identity" }
func (Projector) Tables() []string { return []string{"identity_users", "identity_apps"} }

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.identity_users (
    id            text PRIMARY KEY,
    username      text        NOT NULL,
    email         text        NOT NULL DEFAULT '',
    name          text        NOT NULL DEFAULT '',
    password_hash text        NOT NULL,
    admin         boolean     NOT NULL DEFAULT false,
    allowed_ips   text[]      NOT NULL DEFAULT '{}',
    disabled      boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX ON %[1]s.identity_users (lower(username));
CREATE TABLE %[1]s.identity_apps (
    id                 text PRIMARY KEY,
    name               text        NOT NULL,
    client_id          text        NOT NULL,
    client_secret_hash text        NOT NULL,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX ON %[1]s.identity_apps (client_id);`, schema))
	return err
}

func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	users := schema + ".identity_users"
	apps := schema + ".identity_apps"
	for _, r := range events {
		var (
			sql  string
			args []any
		)
		at := r.RecordedAt
		switch e := r.Data.(type) {
		case identity.UserCreated:
			ips := e.AllowedIPs
			if ips == nil {
				ips = []string{}
			}
			sql = `INSERT INTO ` + users + ` (id, username, email, name, password_hash, admin, allowed_ips, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (id) DO NOTHING`
			args = []any{e.UserID, e.Username, e.Email, e.Name, e.PasswordHash, e.Admin, ips, at}
		case identity.UserRenamed:
			sql, args = `UPDATE `+users+` SET username = $2, updated_at = $3 WHERE id = $1`, []any{e.UserID, e.Username, at}
		case identity.UserProfileUpdated:
			sql, args = `UPDATE `+users+` SET email = $2, name = $3, updated_at = $4 WHERE id = $1`, []any{e.UserID, e.Email, e.Name, at}
		case identity.UserPasswordChanged:
			sql, args = `UPDATE `+users+` SET password_hash = $2, updated_at = $3 WHERE id = $1`, []any{e.UserID, e.PasswordHash, at}
		case identity.UserAdminChanged:
			sql, args = `UPDATE `+users+` SET admin = $2, updated_at = $3 WHERE id = $1`, []any{e.UserID, e.Admin, at}
		case identity.UserAllowedIPsChanged:
			ips := e.AllowedIPs
			if ips == nil {
				ips = []string{}
			}
			sql, args = `UPDATE `+users+` SET allowed_ips = $2, updated_at = $3 WHERE id = $1`, []any{e.UserID, ips, at}
		case identity.UserDisabled:
			sql, args = `UPDATE `+users+` SET disabled = true, updated_at = $2 WHERE id = $1`, []any{e.UserID, at}
		case identity.UserEnabled:
			sql, args = `UPDATE `+users+` SET disabled = false, updated_at = $2 WHERE id = $1`, []any{e.UserID, at}
		case identity.AppCreated:
			sql = `INSERT INTO ` + apps + ` (id, name, client_id, client_secret_hash, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (id) DO NOTHING`
			args = []any{e.AppID, e.Name, e.ClientID, e.ClientSecretHash, at}
		case identity.AppRenamed:
			sql, args = `UPDATE `+apps+` SET name = $2, updated_at = $3 WHERE id = $1`, []any{e.AppID, e.Name, at}
		default:
			continue
		}
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("identity projection, event %d (%s): %w", r.Pos, r.Type, err)
		}
	}
	return nil
}

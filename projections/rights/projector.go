// Package rights projects grants and revokes into the effective-rights
// table that the authorizer reads.
package rights

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/projections"
)

// Projector writes rights_grants: one row per (user, app, scope) with the
// permissions held there.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the rights context's events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "rights.") }

func (Projector) Name() string     { return "rights" }
func (Projector) Tables() []string { return []string{"rights_grants"} }

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.rights_grants (
    user_id     text        NOT NULL,
    app_id      text        NOT NULL,
    scope_kind  text        NOT NULL,
    scope_id    text        NOT NULL,
    permissions text[]      NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, app_id, scope_kind, scope_id)
);
CREATE INDEX ON %[1]s.rights_grants (app_id);`, schema))
	return err
}

type key struct{ user, app, kind, id string }

type row struct {
	perms rights.Set
	at    time.Time
}

// Apply folds the batch in memory, per touched row, then writes every
// touched row with one upsert and one delete: a batch of thousands of events
// costs three statements.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	table := schema + ".rights_grants"
	touched := map[key]*row{}
	var order []key
	var users []string
	seen := map[string]bool{}
	for _, r := range events {
		var k key
		switch e := r.Data.(type) {
		case rights.Granted:
			k = key{e.UserID, e.AppID, e.ScopeKind, e.ScopeID}
		case rights.Revoked:
			k = key{e.UserID, e.AppID, e.ScopeKind, e.ScopeID}
		default:
			continue
		}
		if _, ok := touched[k]; !ok {
			touched[k] = nil
			order = append(order, k)
		}
		if !seen[k.user] {
			seen[k.user] = true
			users = append(users, k.user)
		}
	}
	if len(order) == 0 {
		return nil
	}
	// Load the current rows of the touched users.
	rows, err := db.Query(ctx, `SELECT user_id, app_id, scope_kind, scope_id, permissions, updated_at
		FROM `+table+` WHERE user_id = ANY($1)`, users)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		var perms []string
		var at time.Time
		if err := rows.Scan(&k.user, &k.app, &k.kind, &k.id, &perms, &at); err != nil {
			rows.Close()
			return err
		}
		if _, ok := touched[k]; ok {
			touched[k] = &row{perms: toSet(perms), at: at}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range events {
		switch e := r.Data.(type) {
		case rights.Granted:
			rw := ensure(touched, key{e.UserID, e.AppID, e.ScopeKind, e.ScopeID})
			for p := range toSet(e.Permissions) {
				rw.perms[p] = struct{}{}
			}
			rw.at = r.RecordedAt
		case rights.Revoked:
			rw := ensure(touched, key{e.UserID, e.AppID, e.ScopeKind, e.ScopeID})
			for p := range toSet(e.Permissions) {
				delete(rw.perms, p)
			}
			rw.at = r.RecordedAt
		}
	}
	var (
		uu, aa, kk, ii, pp []string
		tt                 []time.Time
		du, da, dk, di     []string
	)
	for _, k := range order {
		rw := touched[k]
		if len(rw.perms) == 0 {
			du, da, dk, di = append(du, k.user), append(da, k.app), append(dk, k.kind), append(di, k.id)
			continue
		}
		uu, aa, kk, ii = append(uu, k.user), append(aa, k.app), append(kk, k.kind), append(ii, k.id)
		pp = append(pp, pgArray(rw.perms.Sorted()))
		tt = append(tt, rw.at)
	}
	if len(uu) > 0 {
		if _, err := db.Exec(ctx, `INSERT INTO `+table+` (user_id, app_id, scope_kind, scope_id, permissions, updated_at)
			SELECT u, a, k, i, p::text[], t FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) AS x(u, a, k, i, p, t)
			ON CONFLICT (user_id, app_id, scope_kind, scope_id) DO UPDATE SET permissions = EXCLUDED.permissions, updated_at = EXCLUDED.updated_at`,
			uu, aa, kk, ii, pp, tt); err != nil {
			return fmt.Errorf("rights projection: %w", err)
		}
	}
	if len(du) > 0 {
		if _, err := db.Exec(ctx, `DELETE FROM `+table+` g USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x(u, a, k, i)
			WHERE g.user_id = x.u AND g.app_id = x.a AND g.scope_kind = x.k AND g.scope_id = x.i`, du, da, dk, di); err != nil {
			return fmt.Errorf("rights projection: %w", err)
		}
	}
	return nil
}

func ensure(m map[key]*row, k key) *row {
	if m[k] == nil {
		m[k] = &row{perms: rights.Set{}}
	}
	return m[k]
}

func toSet(names []string) rights.Set {
	s := rights.Set{}
	for _, n := range names {
		if p, err := rights.ParsePermission(n); err == nil {
			s[p] = struct{}{}
		}
	}
	return s
}

// pgArray renders a text[] literal; permission names need no quoting.
func pgArray(names []string) string {
	out := "{"
	for i, n := range names {
		if i > 0 {
			out += ","
		}
		out += n
	}
	return out + "}"
}

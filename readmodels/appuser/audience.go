package appuser

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/push"
)

// Devices calls fn for every device (a push token of a live app user) of
// app that target t reaches, in push.DeviceKey order, strictly after
// `after` (the zero key: from the start). fn returning an error stops the
// walk and Devices returns it.
//
// t reaches the app users named by alias, the app users an identified user
// of t signed in on, and the app users whose tags match t.Tags (any filter
// with TagMode partial or empty, every filter with total); the parts add
// up. A target that names nothing reaches nobody.
//
// The walk goes page by page (PageSize app users per page), each page a
// keyset query that reads index ranges from the previous page's last app
// user on: a segment of 100k app users costs a few dozen short queries,
// never one that holds them all.
func (s *Store) Devices(ctx context.Context, app string, t push.Target, after push.DeviceKey, fn func(push.Device) error) error {
	n := s.PageSize
	if n <= 0 {
		n = DefaultPageSize
	}
	cursor, inclusive := after.AppUserID, true
	for {
		ids, err := s.audiencePage(ctx, app, t, cursor, inclusive, n)
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := s.devicesOf(ctx, ids, after, fn); err != nil {
			return err
		}
		if len(ids) < n {
			return nil
		}
		cursor, inclusive = ids[len(ids)-1], false
	}
}

// audiencePage returns up to n ids of app users reached by t, in order,
// from cursor on (inclusive: cursor itself too).
func (s *Store) audiencePage(ctx context.Context, app string, t push.Target, cursor string, inclusive bool, n int) ([]string, error) {
	args := sqlArgs{app}
	op := " > "
	if inclusive {
		op = " >= "
	}
	from := op + args.add(cursor)
	limit := args.add(n)
	var branches []string
	if len(t.Aliases) > 0 {
		branches = append(branches, `SELECT id FROM appusers WHERE app = $1 AND alias = ANY(`+args.add(t.Aliases)+`)
			AND deleted_at IS NULL AND id`+from+` ORDER BY id LIMIT `+limit)
	}
	if len(t.Identified) > 0 {
		branches = append(branches, `SELECT id FROM appusers WHERE app = $1 AND identified = ANY(`+args.add(t.Identified)+`)
			AND identified <> '' AND deleted_at IS NULL AND id`+from+` ORDER BY id LIMIT `+limit)
	}
	filters := make([]TagFilter, len(t.Tags))
	for i, f := range t.Tags {
		filters[i] = TagFilter(f)
	}
	branches = append(branches, tagBranches(filters, t.TagMode == push.Total, from, limit, &args)...)
	if len(branches) == 0 {
		return nil, nil
	}
	sql := `SELECT DISTINCT id FROM ((` + strings.Join(branches, ") UNION ALL (") + `)) m ORDER BY id LIMIT ` + limit
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// tagBranches are the queries whose union is a page of a tag segment:
// with total, one that walks the first filter's index and checks the
// others per app user; otherwise one per filter. Each returns its first
// `limit` distinct app users from the cursor on, in order, read from one
// index range.
func tagBranches(filters []TagFilter, total bool, from, limit string, args *sqlArgs) []string {
	if len(filters) == 0 {
		return nil
	}
	branch := func(f TagFilter, extra string) string {
		c := tagCond("t", f, args)
		if c == "" {
			return ""
		}
		return `SELECT DISTINCT t.app_user_id AS id FROM appuser_tags t WHERE t.app = $1 AND ` + c +
			` AND t.app_user_id` + from + extra + ` ORDER BY t.app_user_id LIMIT ` + limit
	}
	if total {
		var others []string
		for _, f := range filters[1:] {
			c := tagCond("o", f, args)
			if c == "" {
				return nil
			}
			others = append(others, ` AND EXISTS (SELECT 1 FROM appuser_tags o WHERE o.app = $1 AND o.app_user_id = t.app_user_id AND `+c+`)`)
		}
		if b := branch(filters[0], strings.Join(others, "")); b != "" {
			return []string{b}
		}
		return nil
	}
	var out []string
	for _, f := range filters {
		if b := branch(f, ""); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// devicesOf calls fn for the devices of app users ids (in order) after
// the key.
func (s *Store) devicesOf(ctx context.Context, ids []string, after push.DeviceKey, fn func(push.Device) error) error {
	rows, err := s.pool.Query(ctx, `SELECT app_user_id, alias, platform, token FROM appuser_devices
		WHERE app_user_id = ANY($1) AND (app_user_id, token) > ($2, $3) ORDER BY app_user_id, token`,
		ids, after.AppUserID, after.Token)
	if err != nil {
		return err
	}
	// The page is read whole before fn runs, so that a slow fn (sending)
	// holds no connection.
	devices, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (push.Device, error) {
		var d push.Device
		var platform string
		err := row.Scan(&d.AppUserID, &d.Alias, &platform, &d.Token)
		d.Platform = push.Platform(platform)
		return d, err
	})
	if err != nil {
		return err
	}
	for _, d := range devices {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

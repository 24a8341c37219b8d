// Package appusers answers the segmentation queries from the appusers
// projection's tables: app users by id or alias, segments of app users by
// tags (for the CMS, paginated, and for push, streamed device by device),
// identified users and pockets.
package appuser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/readmodels/internal/like"
)

// Store reads the appusers tables.
type Store struct {
	pool *pgxpool.Pool
	// PageSize is how many app users Devices reads per query
	// (DefaultPageSize if 0).
	PageSize int
}

// DefaultPageSize is Devices' page of app users.
const DefaultPageSize = 5000

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("appusers.New: nil pool")
	}
	return &Store{pool: pool}
}

// Device is one push token of an app user.
type Device struct {
	Platform string `json:"platform"`
	Token    string `json:"token"`
}

// Tag is a segmentation tag of an app user.
type Tag struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType string `json:"tagType"`
}

// AppUser is an app user as read; dates are epoch milliseconds. AppNumber
// is the app's number (HALO's integer appId).
type AppUser struct {
	ID         string
	App        string
	AppNumber  int
	Alias      string
	Email      string
	Identified string
	Devices    []Device
	Tags       []Tag
	CreatedAt  int64
	UpdatedAt  int64
}

const userSelect = `SELECT u.id, u.app, coalesce(a.number, 0), u.alias, u.email, u.identified, u.devices, u.tags,
	u.created_at, u.updated_at FROM appusers u LEFT JOIN appuser_apps a ON a.app = u.app`

func scanUser(row pgx.Row) (AppUser, error) {
	var (
		u             AppUser
		devices, tags []byte
	)
	if err := row.Scan(&u.ID, &u.App, &u.AppNumber, &u.Alias, &u.Email, &u.Identified, &devices, &tags,
		&u.CreatedAt, &u.UpdatedAt); err != nil {
		return u, err
	}
	if err := json.Unmarshal(devices, &u.Devices); err != nil {
		return u, err
	}
	if err := json.Unmarshal(tags, &u.Tags); err != nil {
		return u, err
	}
	return u, nil
}

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fault.NotFoundf("app user not found")
	}
	return err
}

// AppUser returns a live app user by id (fault.NotFound when unknown or
// deleted).
func (s *Store) AppUser(ctx context.Context, id string) (AppUser, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, userSelect+` WHERE u.id = $1 AND u.deleted_at IS NULL`, id))
	return u, notFound(err)
}

// AppUserByAlias returns the live app user of app with this alias
// (fault.NotFound when there is none).
func (s *Store) AppUserByAlias(ctx context.Context, app, alias string) (AppUser, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, userSelect+` WHERE u.app = $1 AND u.alias = $2 AND u.deleted_at IS NULL
		ORDER BY u.id LIMIT 1`, app, alias))
	return u, notFound(err)
}

// AppUserIDByAlias returns the id of the live app user of app with this
// alias (fault.NotFound when there is none): sign-in links the device
// whose alias the SDK sends.
func (s *Store) AppUserIDByAlias(ctx context.Context, app, alias string) (string, error) {
	u, err := s.AppUserByAlias(ctx, app, alias)
	return u.ID, err
}

// AppNumber returns the number of an app (0 when the app is unknown).
func (s *Store) AppNumber(ctx context.Context, app string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT number FROM appuser_apps WHERE app = $1`, app).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// AppByNumber returns the id of the app with this number (fault.NotFound
// when there is none).
func (s *Store) AppByNumber(ctx context.Context, n int) (string, error) {
	if n < 1 || n > math.MaxInt32 { // numbers are integer columns
		return "", fault.NotFoundf("app %d not found", n)
	}
	var app string
	err := s.pool.QueryRow(ctx, `SELECT app FROM appuser_apps WHERE number = $1`, n).Scan(&app)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fault.NotFoundf("app %d not found", n)
	}
	return app, err
}

// UnknownAliases returns those of aliases that name no live app user of
// app, in the order given, once each.
func (s *Store) UnknownAliases(ctx context.Context, app string, aliases []string) ([]string, error) {
	return s.unknown(ctx, `SELECT EXISTS (SELECT 1 FROM appusers WHERE app = $1 AND alias = x AND deleted_at IS NULL)`, app, aliases)
}

// UnknownIdentified returns those of ids that name no identified user of
// app, in the order given, once each.
func (s *Store) UnknownIdentified(ctx context.Context, app string, ids []string) ([]string, error) {
	return s.unknown(ctx, `SELECT EXISTS (SELECT 1 FROM appuser_identified WHERE app = $1 AND id = x)`, app, ids)
}

func (s *Store) unknown(ctx context.Context, exists, app string, names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT x FROM unnest($2::text[]) WITH ORDINALITY AS n(x, o)
		WHERE NOT (`+exists+`) ORDER BY o`, app, names)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := []string{}
	seen := map[string]bool{}
	for _, n := range found {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// SegmentQuery lists the live app users of an app that match tags (all of
// them when Tags is empty), in id order.
type SegmentQuery struct {
	App    string
	Tags   []TagFilter
	Total  bool // every filter must match (otherwise any)
	Offset int
	Limit  int
}

// TagFilter is one tag of a segment: by id, or by name (case-insensitive)
// and, if not empty, value.
type TagFilter struct {
	ID    string
	Name  string
	Value string
}

// SegmentResult is a page of a segment and the segment's size.
type SegmentResult struct {
	Total int
	Items []AppUser
}

// sqlArgs accumulates positional arguments.
type sqlArgs []any

func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

// tagCond is the condition that a row of appuser_tags aliased t (of the
// app in $1) carries filter f; "" for a filter that names nothing.
func tagCond(t string, f TagFilter, args *sqlArgs) string {
	switch {
	case f.ID != "":
		return t + ".tag_id = " + args.add(f.ID)
	case f.Name == "":
		return ""
	case f.Value == "":
		return "lower(" + t + ".name) = lower(" + args.add(f.Name) + ")"
	}
	return "lower(" + t + ".name) = lower(" + args.add(f.Name) + ") AND " + t + ".value = " + args.add(f.Value)
}

// matchCond is the condition that app user u (of the app in $1) is in the
// segment; "false" when no filter names anything.
func matchCond(tags []TagFilter, total bool, args *sqlArgs) string {
	var conds []string
	for _, f := range tags {
		c := tagCond("t", f, args)
		if c == "" {
			if total {
				return "false"
			}
			continue
		}
		conds = append(conds, "EXISTS (SELECT 1 FROM appuser_tags t WHERE t.app = $1 AND t.app_user_id = u.id AND "+c+")")
	}
	if len(conds) == 0 {
		return "false"
	}
	if total {
		return strings.Join(conds, " AND ")
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// Search lists a segment page by page, with its size.
func (s *Store) Search(ctx context.Context, q SegmentQuery) (SegmentResult, error) {
	args := sqlArgs{q.App}
	where := ` WHERE u.app = $1 AND u.deleted_at IS NULL`
	if len(q.Tags) > 0 {
		where += " AND " + matchCond(q.Tags, q.Total, &args)
	}
	var res SegmentResult
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM appusers u`+where, args...).Scan(&res.Total); err != nil {
		return res, err
	}
	res.Items = []AppUser{}
	if res.Total == 0 || q.Offset >= res.Total {
		return res, nil
	}
	page := fmt.Sprintf(" ORDER BY u.id LIMIT %s OFFSET %s", args.add(q.Limit), args.add(q.Offset))
	rows, err := s.pool.Query(ctx, userSelect+where+page, args...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return res, err
		}
		res.Items = append(res.Items, u)
	}
	return res, rows.Err()
}

// IdentifiedUser is an identified user as read.
type IdentifiedUser struct {
	ID          string
	App         string
	Email       string
	Name        string
	Surname     string
	DisplayName string
	PhotoURL    string
	CreatedAt   int64
}

const identifiedCols = `id, app, email, name, surname, display_name, photo_url, created_at`

func scanIdentified(row pgx.Row) (IdentifiedUser, error) {
	var i IdentifiedUser
	err := row.Scan(&i.ID, &i.App, &i.Email, &i.Name, &i.Surname, &i.DisplayName, &i.PhotoURL, &i.CreatedAt)
	return i, err
}

// Identified returns an identified user (fault.NotFound when unknown).
func (s *Store) Identified(ctx context.Context, id string) (IdentifiedUser, error) {
	i, err := scanIdentified(s.pool.QueryRow(ctx, `SELECT `+identifiedCols+` FROM appuser_identified WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return i, fault.NotFoundf("identified user not found")
	}
	return i, err
}

// IdentifiedQuery lists the identified users of an app whose email, name,
// surname or display name contains Text (case-insensitively; all when
// empty), by email.
type IdentifiedQuery struct {
	App    string
	Text   string
	Offset int
	Limit  int
}

// IdentifiedResult is a page of identified users and how many match.
type IdentifiedResult struct {
	Total int
	Items []IdentifiedUser
}

// SearchIdentified lists identified users page by page.
func (s *Store) SearchIdentified(ctx context.Context, q IdentifiedQuery) (IdentifiedResult, error) {
	args := sqlArgs{q.App}
	where := ` WHERE app = $1`
	if q.Text != "" {
		p := args.add(like.Containing(q.Text))
		where += fmt.Sprintf(` AND (email ILIKE %[1]s OR name ILIKE %[1]s OR surname ILIKE %[1]s OR display_name ILIKE %[1]s)`, p)
	}
	var res IdentifiedResult
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM appuser_identified`+where, args...).Scan(&res.Total); err != nil {
		return res, err
	}
	res.Items = []IdentifiedUser{}
	if res.Total == 0 || q.Offset >= res.Total {
		return res, nil
	}
	page := fmt.Sprintf(" ORDER BY lower(email), id LIMIT %s OFFSET %s", args.add(q.Limit), args.add(q.Offset))
	rows, err := s.pool.Query(ctx, `SELECT `+identifiedCols+` FROM appuser_identified`+where+page, args...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	for rows.Next() {
		i, err := scanIdentified(rows)
		if err != nil {
			return res, err
		}
		res.Items = append(res.Items, i)
	}
	return res, rows.Err()
}

// Pocket is an identified user's pocket.
type Pocket struct {
	Data       map[string]any
	References map[string][]string
}

// Pocket returns an identified user's pocket (empty when never written).
// Numbers in the data are json.Number, exactly as stored.
func (s *Store) Pocket(ctx context.Context, identifiedID string) (Pocket, error) {
	p := Pocket{Data: map[string]any{}, References: map[string][]string{}}
	var data, refs []byte
	err := s.pool.QueryRow(ctx, `SELECT data, refs FROM appuser_pockets WHERE identified_id = $1`, identifiedID).Scan(&data, &refs)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&p.Data); err != nil {
		return p, err
	}
	if err := json.Unmarshal(refs, &p.References); err != nil {
		return p, err
	}
	return p, nil
}

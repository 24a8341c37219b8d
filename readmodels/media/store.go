// Package media answers the media library's reads: lists and searches,
// one file with what uses it, facets, the files a URL names, and what the
// file server needs to know to serve a file, from the media projection.
package media

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/readmodels/internal/like"
)

// Store reads the media tables.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("media.NewStore: nil pool")
	}
	return &Store{pool: pool}
}

// File is a media file as read; dates are epoch milliseconds.
type File struct {
	ID, App, Name, Folder string
	Tags                  []string
	Alt, Caption          map[string]string
	URL                   string // an external reference's address
	SHA256                string
	SHAs                  []string // every version's
	Size                  int64
	MIME, Kind            string
	Width, Height         int
	DurationMS            int64
	Version               int
	UploadedBy            string
	UploadedAt, UpdatedAt int64
	Uses                  int
	UsedIn                []Use // Get only
}

// Use is an item or push that references a file.
type Use struct {
	Type, ID, Name, Module, App string
	Published                   bool // items: published now (not expired, not archived)
}

const columns = `f.id, f.app, f.name, f.folder, f.tags, f.alt, f.caption, f.url, f.sha256, f.shas, f.size, f.mime, f.kind,
	f.width, f.height, f.duration_ms, f.version, f.uploaded_by, f.uploaded_at, f.updated_at,
	(SELECT count(*) FROM media_usage u WHERE u.files @> ARRAY[f.id] AND u.app = f.app AND u.live)`

func scan(row pgx.Row) (File, error) {
	var f File
	err := row.Scan(&f.ID, &f.App, &f.Name, &f.Folder, &f.Tags, &f.Alt, &f.Caption, &f.URL, &f.SHA256, &f.SHAs, &f.Size, &f.MIME,
		&f.Kind, &f.Width, &f.Height, &f.DurationMS, &f.Version, &f.UploadedBy, &f.UploadedAt, &f.UpdatedAt, &f.Uses)
	return f, err
}

// Get reads one file with what uses it.
func (s *Store) Get(ctx context.Context, id string) (File, error) {
	f, err := scan(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM media_files f WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return f, fault.NotFoundf("media file %s not found", id)
	}
	if err != nil {
		return f, err
	}
	f.UsedIn, err = s.uses(ctx, f.App, id)
	return f, err
}

// publishedAt3 is the condition on a media_usage row of an item that
// apps see at the time $3 (epoch ms): published, not expired, not
// archived. Both queries that use it take that time as $3.
const publishedAt3 = `published_at > 0 AND published_at <= $3 AND (removed_at = 0 OR removed_at > $3)
	AND (archived_at = 0 OR archived_at > $3)`

// uses lists what of app uses file id: another app's items may hold the
// file's URL, but they are none of this app's business.
func (s *Store) uses(ctx context.Context, app, id string) ([]Use, error) {
	now := time.Now().UnixMilli()
	rows, err := s.pool.Query(ctx, `SELECT ref_type, ref_id, name, module, app, `+publishedAt3+`
		FROM media_usage WHERE files @> ARRAY[$1] AND app = $2 AND live ORDER BY ref_type, name, ref_id`, id, app, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Use, error) {
		var u Use
		err := r.Scan(&u.Type, &u.ID, &u.Name, &u.Module, &u.App, &u.Published)
		return u, err
	})
}

// UsedBy names what of app uses a file: "item:<id>", "push:<id>".
func (s *Store) UsedBy(ctx context.Context, app, id string) ([]string, error) {
	uses, err := s.uses(ctx, app, id)
	out := make([]string, len(uses))
	for i, u := range uses {
		out[i] = u.Type + ":" + u.ID
	}
	return out, err
}

// Published reports whether a published item of app references file id
// (what app tokens may read).
func (s *Store) Published(ctx context.Context, app, id string) (bool, error) {
	now := time.Now().UnixMilli()
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM media_usage WHERE files @> ARRAY[$1] AND live AND app = $2
		AND ref_type = 'item' AND `+publishedAt3+`)`, id, app, now).Scan(&ok)
	return ok, err
}

// FileByURL finds the file of app registered under an external URL.
func (s *Store) FileByURL(ctx context.Context, app, url string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM media_files WHERE url = $1 AND app = $2 ORDER BY uploaded_at LIMIT 1`, url, app).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// Filter selects files of an app.
type Filter struct {
	App        string
	Q          string
	Kind       string
	Tags       []string
	Folder     *string
	Recursive  bool
	UploadedBy string
	From, To   int64 // epoch ms, 0: open
	Sort       string
	Page       int // 1-based
	Limit      int
}

var sorts = map[string]string{
	"": "f.uploaded_at DESC, f.id DESC", "uploaded_desc": "f.uploaded_at DESC, f.id DESC", "uploaded_asc": "f.uploaded_at, f.id",
	"name_asc": "lower(f.name), f.id", "name_desc": "lower(f.name) DESC, f.id DESC", "size_desc": "f.size DESC, f.id", "size_asc": "f.size, f.id",
}

// List answers one page of the files that match f, and how many match.
func (s *Store) List(ctx context.Context, f Filter) ([]File, int, error) {
	order, ok := sorts[f.Sort]
	if !ok {
		return nil, 0, fault.Invalidf("sort must be one of uploaded_desc, uploaded_asc, name_asc, name_desc, size_desc, size_asc").With("field", "sort")
	}
	where := []string{"f.app = $1"}
	args := []any{f.App}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Q != "" {
		add("lower(f.name) LIKE lower($%d)", like.Containing(f.Q))
	}
	if f.Kind != "" {
		add("f.kind = $%d", f.Kind)
	}
	if len(f.Tags) > 0 {
		add("f.tags @> $%d", f.Tags)
	}
	if f.Folder != nil {
		if f.Recursive && *f.Folder != "" {
			add("(f.folder = $%[1]d OR f.folder LIKE $%[1]d || '/%%')", *f.Folder)
		} else if !f.Recursive {
			add("f.folder = $%d", *f.Folder)
		}
	}
	if f.UploadedBy != "" {
		add("f.uploaded_by = $%d", f.UploadedBy)
	}
	if f.From > 0 {
		add("f.uploaded_at >= $%d", f.From)
	}
	if f.To > 0 {
		add("f.uploaded_at <= $%d", f.To)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM media_files f WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	args = append(args, f.Limit, (f.Page-1)*f.Limit)
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT %s FROM media_files f WHERE %s ORDER BY %s LIMIT $%d OFFSET $%d`,
		columns, cond, order, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, err
	}
	files, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (File, error) { return scan(r) })
	return files, total, err
}

// Count is a facet's value and how many files have it.
type Count struct {
	Value string
	Count int
}

// Facets are an app's folders (every level), tags and kinds, with counts.
type Facets struct{ Folders, Tags, Kinds []Count }

// Facets reads app's facets.
func (s *Store) Facets(ctx context.Context, app string) (Facets, error) {
	var out Facets
	for _, q := range []struct {
		sql  string
		into *[]Count
	}{
		{`SELECT folder, count(*) FROM media_files WHERE app = $1 GROUP BY folder ORDER BY folder`, &out.Folders},
		{`SELECT t, count(*) FROM media_files, unnest(tags) t WHERE app = $1 GROUP BY t ORDER BY t`, &out.Tags},
		{`SELECT kind, count(*) FROM media_files WHERE app = $1 GROUP BY kind ORDER BY kind`, &out.Kinds},
	} {
		rows, err := s.pool.Query(ctx, q.sql, app)
		if err != nil {
			return out, err
		}
		if *q.into, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Count, error) {
			var c Count
			err := r.Scan(&c.Value, &c.Count)
			return c, err
		}); err != nil {
			return out, err
		}
	}
	out.Folders = withParents(out.Folders)
	return out, nil
}

// withParents adds the folders that hold only folders (count 0), so that
// every level of a path is listed.
func withParents(folders []Count) []Count {
	seen := map[string]bool{}
	for _, f := range folders {
		seen[f.Value] = true
	}
	out := folders
	for _, f := range folders {
		p := f.Value
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p, '/') {
			p = p[:i]
			if !seen[p] {
				seen[p] = true
				out = append(out, Count{Value: p})
			}
		}
	}
	return out
}

// Ref is what the file server needs to know of a file.
type Ref struct {
	ID, App, Name, MIME, Kind string
	URL                       string   // an external reference's address
	SHA256                    string   // the current version's
	SHAs                      []string // every version's
}

// Ref reads a file's Ref.
func (s *Store) Ref(ctx context.Context, id string) (Ref, error) {
	var r Ref
	err := s.pool.QueryRow(ctx, `SELECT id, app, name, mime, kind, url, sha256, shas FROM media_files WHERE id = $1`, id).
		Scan(&r.ID, &r.App, &r.Name, &r.MIME, &r.Kind, &r.URL, &r.SHA256, &r.SHAs)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fault.NotFoundf("media file %s not found", id)
	}
	return r, err
}

// Signed reports whether app's files need a signed URL or a token.
func (s *Store) Signed(ctx context.Context, app string) (bool, error) {
	var signed bool
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT signed FROM media_apps WHERE app = $1), false)`, app).Scan(&signed)
	return signed, err
}

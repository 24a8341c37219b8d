package media

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/projections"
)

// row is one media_files row; its JSON form feeds jsonb_to_recordset.
type row struct {
	ID         string            `json:"id"`
	App        string            `json:"app"`
	Name       string            `json:"name"`
	Folder     string            `json:"folder"`
	Tags       []string          `json:"tags"`
	Alt        map[string]string `json:"alt"`
	Caption    map[string]string `json:"caption"`
	URL        string            `json:"url"`
	SHA256     string            `json:"sha256"`
	SHAs       []string          `json:"shas"`
	Size       int64             `json:"size"`
	MIME       string            `json:"mime"`
	Kind       string            `json:"kind"`
	Width      int               `json:"width"`
	Height     int               `json:"height"`
	DurationMS int64             `json:"duration_ms"`
	Version    int               `json:"version"`
	UploadedBy string            `json:"uploaded_by"`
	UploadedAt int64             `json:"uploaded_at"`
	UpdatedAt  int64             `json:"updated_at"`
	deleted    bool
}

const rowCols = `id text, app text, name text, folder text, tags text[], alt jsonb, caption jsonb, url text, sha256 text, shas text[],
	size bigint, mime text, kind text, width integer, height integer, duration_ms bigint, version integer,
	uploaded_by text, uploaded_at bigint, updated_at bigint`

const rowNames = `id, app, name, folder, tags, alt, caption, url, sha256, shas, size, mime, kind, width, height, duration_ms,
	version, uploaded_by, uploaded_at, updated_at`

func (r *row) setBytes(b media.Bytes) {
	if b.SHA256 != "" && !slices.Contains(r.SHAs, b.SHA256) {
		r.SHAs = append(r.SHAs, b.SHA256)
	}
	r.SHA256, r.Size, r.MIME, r.Kind = b.SHA256, b.Size, b.MIME, string(b.Kind)
	r.Width, r.Height, r.DurationMS = b.Width, b.Height, b.Duration.Milliseconds()
}

// uploader is who an event's metadata names ("user:<id>" → the id).
func uploader(actor string) string {
	if len(actor) > 5 && actor[:5] == "user:" {
		return actor[5:]
	}
	return actor
}

// fileOf names the file of a media event.
func fileOf(data any) (string, bool) {
	switch e := data.(type) {
	case media.Uploaded:
		return e.FileID, true
	case media.Renamed:
		return e.FileID, true
	case media.Described:
		return e.FileID, true
	case media.Tagged:
		return e.FileID, true
	case media.Moved:
		return e.FileID, true
	case media.Replaced:
		return e.FileID, true
	case media.Deleted:
		return e.FileID, true
	}
	return "", false
}

// apply folds one event into a file's row (nil until uploaded).
func apply(r *row, rec event.Recorded) *row {
	at := rec.RecordedAt.UnixMilli()
	if e, ok := rec.Data.(media.Uploaded); ok {
		n := &row{ID: e.FileID, App: e.App, Name: e.Name, Folder: e.Folder, Tags: e.Tags, URL: e.URL, Version: 1,
			UploadedBy: uploader(rec.Meta.Actor), UploadedAt: at, UpdatedAt: at}
		n.setBytes(e.Bytes)
		return n
	}
	if r == nil {
		return nil
	}
	r.UpdatedAt = at
	switch e := rec.Data.(type) {
	case media.Renamed:
		r.Name = e.Name
	case media.Described:
		r.Alt, r.Caption = e.Alt, e.Caption
	case media.Tagged:
		r.Tags = e.Tags
	case media.Moved:
		r.Folder = e.Folder
	case media.Replaced:
		r.setBytes(e.Bytes)
		r.Version, r.URL = e.Version, ""
	case media.Deleted:
		r.deleted = true
	}
	return r
}

// applyFiles loads the touched files' rows once, folds the batch into
// them, upserts the live ones and deletes the deleted ones.
func applyFiles(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	var ids []string
	rows := map[string]*row{}
	for _, r := range events {
		if id, ok := fileOf(r.Data); ok {
			if _, seen := rows[id]; !seen {
				rows[id] = nil
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	table := schema + ".media_files"
	var raw []byte
	if err := db.QueryRow(ctx, `SELECT coalesce(jsonb_agg(to_jsonb(f)), '[]') FROM `+table+` f WHERE id = ANY($1)`, ids).Scan(&raw); err != nil {
		return err
	}
	var current []row
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&current); err != nil {
		return err
	}
	for i := range current {
		rows[current[i].ID] = &current[i]
	}
	for _, r := range events {
		if id, ok := fileOf(r.Data); ok {
			rows[id] = apply(rows[id], r)
		}
	}
	var live []*row
	var gone []string
	for _, id := range ids {
		switch r := rows[id]; {
		case r == nil:
		case r.deleted:
			gone = append(gone, id)
		default:
			if r.Tags == nil {
				r.Tags = []string{}
			}
			if r.SHAs == nil {
				r.SHAs = []string{}
			}
			if r.Alt == nil {
				r.Alt = map[string]string{}
			}
			if r.Caption == nil {
				r.Caption = map[string]string{}
			}
			live = append(live, r)
		}
	}
	if len(gone) > 0 {
		if _, err := db.Exec(ctx, `DELETE FROM `+table+` WHERE id = ANY($1)`, gone); err != nil {
			return err
		}
	}
	if len(live) == 0 {
		return nil
	}
	b, err := json.Marshal(live)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `INSERT INTO `+table+` (`+rowNames+`)
		SELECT `+rowNames+` FROM jsonb_to_recordset($1::jsonb) AS x(`+rowCols+`)
		ON CONFLICT (id) DO UPDATE SET app = EXCLUDED.app, name = EXCLUDED.name, folder = EXCLUDED.folder,
		  tags = EXCLUDED.tags, alt = EXCLUDED.alt, caption = EXCLUDED.caption,
		  url = EXCLUDED.url, sha256 = EXCLUDED.sha256, shas = EXCLUDED.shas, size = EXCLUDED.size, mime = EXCLUDED.mime,
		  kind = EXCLUDED.kind, width = EXCLUDED.width, height = EXCLUDED.height, duration_ms = EXCLUDED.duration_ms,
		  version = EXCLUDED.version, uploaded_by = EXCLUDED.uploaded_by, uploaded_at = EXCLUDED.uploaded_at,
		  updated_at = EXCLUDED.updated_at`, string(b))
	return err
}

package appuser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/projections"
)

// userRow is one appusers row; its JSON form feeds jsonb_to_recordset.
type userRow struct {
	ID         string       `json:"id"`
	App        string       `json:"app"`
	Alias      string       `json:"alias"`
	Email      string       `json:"email"`
	Identified string       `json:"identified"`
	Devices    []DeviceJSON `json:"devices"`
	Tags       []TagJSON    `json:"tags"`
	CreatedAt  int64        `json:"created_at"`
	UpdatedAt  int64        `json:"updated_at"`
	DeletedAt  *int64       `json:"deleted_at"`
}

// DeviceJSON is a device as appusers.devices stores it.
type DeviceJSON struct {
	Platform string `json:"platform"`
	Token    string `json:"token"`
}

// TagJSON is a tag as appusers.tags stores it.
type TagJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType string `json:"tagType"`
}

const userCols = `id text, app text, alias text, email text, identified text, devices jsonb, tags jsonb,
	created_at bigint, updated_at bigint, deleted_at bigint`

const userNames = `id, app, alias, email, identified, devices, tags, created_at, updated_at, deleted_at`

func devicesJSON(ds []appuser.Device) []DeviceJSON {
	out := make([]DeviceJSON, len(ds))
	for i, d := range ds {
		out[i] = DeviceJSON(d)
	}
	return out
}

func tagsJSON(ts []appuser.Tag) []TagJSON {
	out := make([]TagJSON, len(ts))
	for i, t := range ts {
		out[i] = TagJSON(t)
	}
	return out
}

// apply folds one app-user event into the row (nil when the app user is
// new and the event is its creation).
func apply(r *userRow, data any, at int64) *userRow {
	if c, ok := data.(appuser.Created); ok {
		return &userRow{ID: c.AppUserID, App: c.App, Alias: c.Alias, Email: c.Email,
			Devices: devicesJSON(c.Devices), Tags: tagsJSON(c.Tags), CreatedAt: at, UpdatedAt: at}
	}
	if r == nil {
		return nil
	}
	switch e := data.(type) {
	case appuser.Updated:
		r.Email, r.Devices, r.Tags = e.Email, devicesJSON(e.Devices), tagsJSON(e.Tags)
	case appuser.TokenRemoved:
		kept := []DeviceJSON{}
		for _, d := range r.Devices {
			if d.Token != e.Token {
				kept = append(kept, d)
			}
		}
		r.Devices = kept
	case appuser.Linked:
		r.Identified = e.IdentifiedID
	case appuser.Deleted:
		r.DeletedAt = &at
	default:
		return r
	}
	r.UpdatedAt = at
	return r
}

// pocketRow is one appuser_pockets row.
type pocketRow struct {
	IdentifiedID string              `json:"identified_id"`
	App          string              `json:"app"`
	Data         map[string]any      `json:"data"`
	Refs         map[string][]string `json:"refs"`
	UpdatedAt    int64               `json:"updated_at"`
}

// identifiedRow is one appuser_identified row.
type identifiedRow struct {
	ID          string `json:"id"`
	App         string `json:"app"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	Surname     string `json:"surname"`
	DisplayName string `json:"display_name"`
	PhotoURL    string `json:"photo_url"`
	CreatedAt   int64  `json:"created_at"`
}

// Apply folds a batch in memory, per app user and per pocket, and writes
// every touched row set-wise: a batch of thousands of events costs a
// handful of statements.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	b := batch{db: db, schema: schema, users: map[string]*userRow{}, pockets: map[string]*pocketRow{}, fresh: map[string]bool{}}
	var (
		apps       []string
		identified []identifiedRow
		userOrder  []string
		pockOrder  []string
	)
	for _, r := range events {
		switch e := r.Data.(type) {
		case identity.AppCreated:
			apps = append(apps, e.AppID)
		case appuser.IdentifiedRegistered:
			p := e.Profile
			identified = append(identified, identifiedRow{ID: e.IdentifiedID, App: e.App, Email: e.Email, Name: p.Name,
				Surname: p.Surname, DisplayName: p.DisplayName, PhotoURL: p.PhotoURL, CreatedAt: r.RecordedAt.UnixMilli()})
		case appuser.PocketUpdated:
			if _, seen := b.pockets[e.IdentifiedID]; !seen {
				b.pockets[e.IdentifiedID] = nil
				pockOrder = append(pockOrder, e.IdentifiedID)
			}
		case appuser.Event:
			if _, seen := b.users[e.AppUser()]; !seen {
				b.users[e.AppUser()] = nil
				b.fresh[e.AppUser()] = r.StreamVersion == 1 // created by this batch: nothing to read
				userOrder = append(userOrder, e.AppUser())
			}
		}
	}
	b.numberApps(apps)
	if err := b.writeIdentified(identified); err != nil {
		return err
	}
	if len(userOrder) > 0 {
		if err := b.loadUsers(ctx, userOrder); err != nil {
			return err
		}
		for _, r := range events {
			if e, ok := r.Data.(appuser.Event); ok {
				b.users[e.AppUser()] = apply(b.users[e.AppUser()], r.Data, r.RecordedAt.UnixMilli())
			}
		}
		if err := b.writeUsers(userOrder); err != nil {
			return err
		}
	}
	if len(pockOrder) > 0 {
		if err := b.loadPockets(ctx, pockOrder); err != nil {
			return err
		}
		for _, r := range events {
			if e, ok := r.Data.(appuser.PocketUpdated); ok {
				b.pockets[e.IdentifiedID] = applyPocket(b.pockets[e.IdentifiedID], e, r.RecordedAt.UnixMilli())
			}
		}
		if err := b.writePockets(pockOrder); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// batch is one Apply's state. Its writes are queued and sent together, in
// one round trip, before it next reads or when it ends: a batch of new
// app users (registrations over HTTP) reads nothing and writes once.
type batch struct {
	db      projections.DB
	schema  string
	users   map[string]*userRow
	fresh   map[string]bool // app users this batch created (no rows yet)
	pockets map[string]*pocketRow
	queued  projections.Queue
}

func (b *batch) t(name string) string { return b.schema + "." + name }

func (b *batch) flush(ctx context.Context) error {
	if err := b.queued.Flush(ctx, b.db); err != nil {
		return fmt.Errorf("appusers projection, %w", err)
	}
	return nil
}

// numberApps gives new apps the next numbers, in log order.
func (b *batch) numberApps(apps []string) {
	if len(apps) == 0 {
		return
	}
	b.queued.Exec("number apps", `INSERT INTO `+b.t("appuser_apps")+` (app, number)
		SELECT a, (SELECT coalesce(max(number), 0) FROM `+b.t("appuser_apps")+`) + o::int
		FROM unnest($1::text[]) WITH ORDINALITY AS x(a, o)
		ON CONFLICT (app) DO NOTHING`, apps)
}

func (b *batch) writeIdentified(rows []identifiedRow) error {
	if len(rows) == 0 {
		return nil
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	b.queued.Exec("write identified users", `INSERT INTO `+b.t("appuser_identified")+`
		(id, app, email, name, surname, display_name, photo_url, created_at)
		SELECT id, app, email, name, surname, display_name, photo_url, created_at FROM jsonb_to_recordset($1::jsonb)
		AS x(id text, app text, email text, name text, surname text, display_name text, photo_url text, created_at bigint)
		ON CONFLICT (id) DO NOTHING`, data)
	return nil
}

// loadUsers reads the current rows of the touched app users that exist,
// but for those the batch created.
func (b *batch) loadUsers(ctx context.Context, order []string) error {
	var ids []string
	for _, id := range order {
		if !b.fresh[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := b.flush(ctx); err != nil {
		return err
	}
	return projections.LoadJSON(ctx, b.db, `SELECT row_to_json(x) FROM (SELECT `+userNames+` FROM `+b.t("appusers")+
		` WHERE id = ANY($1)) x`, []any{ids}, func(r *userRow) { b.users[r.ID] = r })
}

// deviceRow and tagRow are index rows of live app users.
type deviceRow struct {
	AppUserID string `json:"app_user_id"`
	Token     string `json:"token"`
	App       string `json:"app"`
	Alias     string `json:"alias"`
	Platform  string `json:"platform"`
}

type tagRow struct {
	AppUserID string `json:"app_user_id"`
	App       string `json:"app"`
	TagID     string `json:"tag_id"`
	Name      string `json:"name"`
	Value     string `json:"value"`
}

// chunk bounds the rows of one index-table statement.
const chunk = 20000

func (b *batch) writeUsers(order []string) error {
	rows := make([]*userRow, 0, len(order))
	var devices []deviceRow
	var tags []tagRow
	for _, id := range order {
		r := b.users[id]
		if r == nil {
			continue // events of an app user whose creation this projection never saw
		}
		rows = append(rows, r)
		if r.DeletedAt != nil {
			continue
		}
		for _, d := range r.Devices {
			devices = append(devices, deviceRow{AppUserID: r.ID, Token: d.Token, App: r.App, Alias: r.Alias, Platform: d.Platform})
		}
		for _, t := range r.Tags {
			tags = append(tags, tagRow{AppUserID: r.ID, App: r.App, TagID: t.ID, Name: t.Name, Value: t.Value})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	var set []string
	for _, c := range strings.Split(userNames, ",") {
		if c = strings.TrimSpace(c); c != "id" && c != "created_at" {
			set = append(set, c+" = excluded."+c)
		}
	}
	b.queued.Exec("write app users", `INSERT INTO `+b.t("appusers")+` (`+userNames+`)
		SELECT `+userNames+` FROM jsonb_to_recordset($1::jsonb) AS x(`+userCols+`)
		ON CONFLICT (id) DO UPDATE SET `+strings.Join(set, ", "), data)
	var stored []string // the index rows of the others are replaced
	for _, r := range rows {
		if !b.fresh[r.ID] {
			stored = append(stored, r.ID)
		}
	}
	if len(stored) > 0 {
		for _, table := range []string{"appuser_devices", "appuser_tags"} {
			b.queued.Exec("clear "+table, `DELETE FROM `+b.t(table)+` WHERE app_user_id = ANY($1)`, stored)
		}
	}
	for len(devices) > 0 {
		n := min(chunk, len(devices))
		data, err := json.Marshal(devices[:n])
		if err != nil {
			return err
		}
		b.queued.Exec("write devices", `INSERT INTO `+b.t("appuser_devices")+` (app_user_id, token, app, alias, platform)
			SELECT app_user_id, token, app, alias, platform FROM jsonb_to_recordset($1::jsonb)
			AS x(app_user_id text, token text, app text, alias text, platform text)`, data)
		devices = devices[n:]
	}
	for len(tags) > 0 {
		n := min(chunk, len(tags))
		data, err := json.Marshal(tags[:n])
		if err != nil {
			return err
		}
		b.queued.Exec("write tags", `INSERT INTO `+b.t("appuser_tags")+` (app_user_id, app, tag_id, name, value)
			SELECT app_user_id, app, tag_id, name, value FROM jsonb_to_recordset($1::jsonb)
			AS x(app_user_id text, app text, tag_id text, name text, value text)`, data)
		tags = tags[n:]
	}
	return nil
}

func applyPocket(r *pocketRow, e appuser.PocketUpdated, at int64) *pocketRow {
	var p appuser.Pocket
	if r != nil {
		p = appuser.Pocket{IdentifiedID: r.IdentifiedID, App: r.App, Data: r.Data, References: r.Refs}
	}
	p = p.Apply(e)
	if p.Data == nil {
		p.Data = map[string]any{}
	}
	return &pocketRow{IdentifiedID: e.IdentifiedID, App: e.App, Data: p.Data, Refs: p.References, UpdatedAt: at}
}

func (b *batch) loadPockets(ctx context.Context, ids []string) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	// Pocket data keeps its numbers exactly.
	return projections.LoadJSON(ctx, b.db, `SELECT row_to_json(x) FROM (SELECT identified_id, app, data, refs, updated_at FROM `+
		b.t("appuser_pockets")+` WHERE identified_id = ANY($1)) x`, []any{ids}, func(r *pocketRow) { b.pockets[r.IdentifiedID] = r })
}

func (b *batch) writePockets(order []string) error {
	rows := make([]*pocketRow, 0, len(order))
	for _, id := range order {
		rows = append(rows, b.pockets[id])
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	b.queued.Exec("write pockets", `INSERT INTO `+b.t("appuser_pockets")+` (identified_id, app, data, refs, updated_at)
		SELECT identified_id, app, data, refs, updated_at FROM jsonb_to_recordset($1::jsonb)
		AS x(identified_id text, app text, data jsonb, refs jsonb, updated_at bigint)
		ON CONFLICT (identified_id) DO UPDATE SET app = excluded.app, data = excluded.data, refs = excluded.refs,
			updated_at = excluded.updated_at`, data)
	return nil
}

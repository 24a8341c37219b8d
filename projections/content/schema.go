// Package content projects modules, module types and content items into
// the tables the content read model searches.
package content

import (
	"context"
	"fmt"
	"strings"

	"github.com/halocms/halocms/projections"
)

// Projector writes content_modules, content_module_types, content_items and
// content_keys.
//
// content_items holds one row per item, with its values as jsonb and every
// date as epoch milliseconds. content_keys holds the item's searchable
// values, typed: one row per (item, field) for single-valued fields (a row
// with NULLs when the item has no value, so that sorting by the field can
// walk an index and still list every item), one row per element for
// multi-valued fields and one per locale for localized text. pub_from and
// pub_until copy the item's published interval onto its key rows, so that
// "published items whose category is X" is answered, and counted, from one
// index alone. Texts are indexed once, by lower(s) with s included: the
// index serves case-insensitive sorts and, with an exact recheck on the
// included s, equality.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the content context's events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "content.") }

func (Projector) Name() string { return "content" }
func (Projector) Tables() []string {
	return []string{"content_modules", "content_module_types", "content_items", "content_keys", "content_versions"}
}

// Never is the pub_until of an item with no expiry or archive date.
const Never int64 = 1<<63 - 1

// MaxKeyText is how much of a text value content_keys keeps: comparisons
// and like-patterns on longer texts see their first MaxKeyText characters.
const MaxKeyText = 500

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.content_modules (
    id          text    PRIMARY KEY,
    app         text    NOT NULL,
    name        text    NOT NULL,
    single      boolean NOT NULL DEFAULT false,
    tags        jsonb   NOT NULL DEFAULT '[]',
    fields      jsonb   NOT NULL DEFAULT '[]',
    module_type text    NOT NULL DEFAULT '',
    created_at  bigint  NOT NULL,
    updated_at  bigint,
    deleted_at  bigint,
    created_by  text    NOT NULL DEFAULT '',
    updated_by  text,
    deleted_by  text
);
CREATE INDEX ON %[1]s.content_modules (app, lower(name));
CREATE TABLE %[1]s.content_module_types (
    id         text    PRIMARY KEY,
    name       text    NOT NULL,
    single     boolean NOT NULL DEFAULT false,
    fields     jsonb   NOT NULL DEFAULT '[]',
    updated_at bigint  NOT NULL
);
CREATE TABLE %[1]s.content_items (
    id               text   PRIMARY KEY,
    app              text   NOT NULL,
    module           text   NOT NULL,
    name             text   NOT NULL,
    vals             jsonb  NOT NULL DEFAULT '{}',
    tags             jsonb  NOT NULL DEFAULT '[]',
    tag_keys         text[] NOT NULL DEFAULT '{}',
    external_id      text   NOT NULL DEFAULT '',
    published_at     bigint,
    removed_at       bigint,
    archived_at      bigint,
    deleted_at       bigint,
    created_at       bigint NOT NULL,
    updated_at       bigint,
    created_by       text   NOT NULL DEFAULT '',
    updated_by       text,
    deleted_by       text,
    revision         bigint NOT NULL DEFAULT 0,
    state_changed_at bigint NOT NULL,
    pub_from         bigint,
    pub_until        bigint NOT NULL
);
CREATE INDEX ON %[1]s.content_items (module, created_at, id);
CREATE INDEX ON %[1]s.content_items (module, (coalesce(updated_at, created_at)));
CREATE INDEX ON %[1]s.content_items (module, pub_from, pub_until);
CREATE INDEX ON %[1]s.content_items (app, pub_from);
CREATE INDEX ON %[1]s.content_items (app, pub_until);
CREATE INDEX ON %[1]s.content_items USING gin (tag_keys);
CREATE INDEX ON %[1]s.content_items USING gin (name gin_trgm_ops);
-- An app's content version changes with every batch that touches its
-- modules or items: a cached search answer is fresh while the version is
-- the one it was computed at.
CREATE TABLE %[1]s.content_versions (
    app     text   PRIMARY KEY,
    version bigint NOT NULL
);
CREATE TABLE %[1]s.content_keys (
    item_id   text    NOT NULL,
    module    text    NOT NULL,
    field     text    NOT NULL,
    loc       text    NOT NULL DEFAULT '',
    s         text,
    n         numeric,
    pub_from  bigint,
    pub_until bigint  NOT NULL
);
CREATE INDEX ON %[1]s.content_keys (item_id, field);
CREATE INDEX ON %[1]s.content_keys (module, field, n NULLS FIRST, item_id) INCLUDE (pub_from, pub_until);
CREATE INDEX ON %[1]s.content_keys (module, field, lower(s) NULLS FIRST, item_id) INCLUDE (s, pub_from, pub_until);
CREATE INDEX ON %[1]s.content_keys USING gin (s gin_trgm_ops);
-- How often a text occurs in a field: without it the planner multiplies the
-- selectivities of module, field, lower(s) and s as if independent, thinks
-- "category = X" matches a handful of rows and sorts every match instead
-- of walking the sort index.
CREATE STATISTICS %[1]s.content_keys_text (mcv) ON module, field, lower(s), s FROM %[1]s.content_keys;`, schema))
	return err
}

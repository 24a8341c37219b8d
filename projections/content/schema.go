// Package content projects modules, module types and content items into
// the tables the content read model searches.
package content

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/projections"
)

// Projector writes content_modules, content_module_types, content_items,
// content_fields and content_keys.
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
//
// content_fields holds one row per item with the values of its module's
// first single-valued fields in typed columns (see Slots); those fields
// have no content_keys rows.
type Projector struct{}

var (
	_ projections.Projector = Projector{}
	_ projections.Layouter  = Projector{}
	_ projections.Compared  = Projector{}
)

// ComparedColumns: content_versions' versions come from the clock (see
// bumpVersions), so that a rebuild's are newer than any before it; a
// rebuild is verified on which apps have one, and on content_fields but
// their versions.
func (Projector) ComparedColumns() map[string][]string {
	fields := slices.Concat([]string{"item_id", "module", "pub_from", "pub_until"}, SlotColumns, WholeColumns, []string{"tx", "eqs"})
	return map[string][]string{"content_versions": {"app"}, "content_fields": fields}
}

// Layout: content_fields.tx holds its texts lower-cased by PostgreSQL's
// lower(), so that a search's like checks a candidate's tx with LIKE and
// a pattern lower-cased once, which finds exactly what ILIKE finds
// (ILIKE lower-cases both sides with the same lower()) without
// lower-casing every candidate's texts; tx holds whole texts, and the
// whole text of a value longer than MaxKeyText characters is kept beside
// its cut (content_fields.x1..x6, content_keys.x; see MaxKeyText), so
// that searches see every character; content_modules.revision counts
// each module's changes; the items of a deleted module are deleted with
// it; content_items.live_ended_at tells sync which items a client may hold
// (see itemRow.noteEnd); content_fields.version is the content version of
// the batch that wrote the row, and content_versions' row of app ” the
// tables' Epoch (see bumpVersions). Versions made before are paused until
// rebuilt.
func (Projector) Layout() string {
	return "content_fields.tx lower-cased, whole texts; content_fields.x1-x6, content_keys.x; content_modules.revision; items deleted with their module; content_items.live_ended_at; content_fields.version, epoch"
}

// Epoch is the app whose row of content_versions holds when the tables
// were made: each version of the projection has its own, so a reader that
// kept rows at some app's version can tell, after a rebuild, that the
// versions it compares with come from other tables.
const Epoch = ""

// Handles reports that the projector uses the content context's events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "content.") }

func (Projector) Name() string { return "content" }
func (Projector) Tables() []string {
	return []string{"content_modules", "content_module_types", "content_items", "content_keys", "content_fields", "content_versions"}
}

// Never is the pub_until of an item with no expiry or archive date.
const Never int64 = 1<<63 - 1

// MaxKeyText and MaxKeyBytes bound how much of a text value the btree
// indexes take: a content_keys.s or content_fields.t<i> holds KeyCut of
// its text, at most MaxKeyText characters and MaxKeyBytes bytes, and,
// when the text is longer, content_keys.x or content_fields.x<i> holds it
// whole (NULL otherwise). A btree entry must fit in a third of a page
// (2,704 bytes) and the text columns' indexes hold both the text and its
// lower(), which may be longer in bytes: 500 characters of a script of
// three or four bytes each would not fit. Searches compare and match whole
// texts (they check a cut text's whole one), and content_fields.tx takes
// whole texts; sorts order by the cut.
const (
	MaxKeyText  = 500
	MaxKeyBytes = 800
)

// KeyCut returns the part of text s that a text column keeps: its first
// MaxKeyText characters, fewer when they would pass MaxKeyBytes bytes.
func KeyCut(s string) string {
	if len(s) <= MaxKeyText {
		return s
	}
	for i, n := 0, 0; i < len(s); n++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		if n == MaxKeyText || i+w > MaxKeyBytes {
			return s[:i]
		}
		i += w
	}
	return s
}

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.content_modules (
    id          text    PRIMARY KEY,
    app         text    NOT NULL,
    name        text    NOT NULL,
    single      boolean NOT NULL DEFAULT false,
    tags        jsonb   NOT NULL DEFAULT '[]',
    fields      jsonb   NOT NULL DEFAULT '[]',
    slots       jsonb   NOT NULL DEFAULT '{}',
    module_type text    NOT NULL DEFAULT '',
    -- One more with every change of the module: a reader that kept a
    -- module can tell whether it is still the same (see Layout).
    revision    bigint  NOT NULL DEFAULT 1,
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
    pub_until        bigint NOT NULL,
    -- When the stretch of publication ended that the item's dates gave
    -- before its latest state event, if a sync may have seen it (see
    -- itemRow.noteEnd); NULL while no such event came after dates of
    -- publication.
    live_ended_at    bigint
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
-- The row of app '' names these tables (see Epoch).
INSERT INTO %[1]s.content_versions VALUES ('', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
CREATE TABLE %[1]s.content_keys (
    item_id   text    NOT NULL,
    module    text    NOT NULL,
    field     text    NOT NULL,
    loc       text    NOT NULL DEFAULT '',
    s         text,
    n         numeric,
    pub_from  bigint,
    pub_until bigint  NOT NULL,
    -- s whole, when s holds only its first MaxKeyText characters.
    x         text
);
CREATE INDEX ON %[1]s.content_keys (item_id, field);
CREATE INDEX ON %[1]s.content_keys (module, field, n NULLS FIRST, item_id) INCLUDE (pub_from, pub_until);
CREATE INDEX ON %[1]s.content_keys (module, field, lower(s) NULLS FIRST, item_id) INCLUDE (s, pub_from, pub_until);
CREATE INDEX ON %[1]s.content_keys USING gin (s gin_trgm_ops);
-- A like finds a cut text's match past the cut here.
CREATE INDEX ON %[1]s.content_keys USING gin (x gin_trgm_ops) WHERE x IS NOT NULL;
%[2]s
-- How often a text occurs in a field: without it the planner multiplies the
-- selectivities of module, field, lower(s) and s as if independent, thinks
-- "category = X" matches a handful of rows and sorts every match instead
-- of walking the sort index.
CREATE STATISTICS %[1]s.content_keys_text (mcv) ON module, field, lower(s), s FROM %[1]s.content_keys;`, schema, fieldsTable(schema)))
	return err
}

// fieldsTable is the DDL of content_fields: the typed columns (see
// SlotColumns), then per text column t<i> the whole text x<i> when it is
// longer than t<i> keeps (see MaxKeyText); per text column an index on
// (module, lower(t), item_id) INCLUDE (t, pub_from, pub_until) (ranges,
// sorts walked in either direction, "published items whose t = X" counted
// from the index alone);
// per number column an index on (module, n, item_id); and one GIN index on
// the trigrams of all texts (tx) and the equality tokens (eqs, see
// EqToken), so that "category = X and title like Y" is one index scan
// that intersects compressed posting lists.
func fieldsTable(schema string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s.content_fields (\n    item_id   text   PRIMARY KEY,\n    module    text   NOT NULL,\n"+
		"    pub_from  bigint,\n    pub_until bigint NOT NULL,\n", schema)
	for _, c := range SlotColumns {
		typ := "text"
		if c[0] == 'n' {
			typ = "numeric"
		}
		fmt.Fprintf(&b, "    %s %s,\n", c, typ)
	}
	for _, c := range WholeColumns {
		fmt.Fprintf(&b, "    %s text,\n", c)
	}
	b.WriteString("    tx        text,\n    eqs       text[] NOT NULL DEFAULT '{}',\n    version   bigint NOT NULL DEFAULT 0\n);\n")
	// The rows a batch wrote after a given version (see bumpVersions).
	fmt.Fprintf(&b, "CREATE INDEX ON %s.content_fields (module, version);\n", schema)
	for _, c := range SlotColumns {
		if c[0] == 'n' {
			fmt.Fprintf(&b, "CREATE INDEX ON %s.content_fields (module, %s NULLS FIRST, item_id);\n", schema, c)
		} else {
			fmt.Fprintf(&b, "CREATE INDEX ON %s.content_fields (module, lower(%[2]s) NULLS FIRST, item_id) INCLUDE (%[2]s, pub_from, pub_until);\n", schema, c)
		}
	}
	fmt.Fprintf(&b, "CREATE INDEX ON %s.content_fields USING gin (tx gin_trgm_ops, eqs);", schema)
	return b.String()
}

// Package media projects the media library (media_files, one row per
// live file) and where each file is used (media_usage: one row per
// content item and push, with the files its values or image name, and
// whether it is live and published).
package media

import (
	"context"
	"fmt"
	"strings"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/projections"
)

// Projector writes media_files and media_usage.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles: the media context's events, content items' and pushes'.
func (Projector) Handles(t string) bool {
	return strings.HasPrefix(t, "media.") || strings.HasPrefix(t, "content.item_") ||
		t == "push.scheduled" || t == "push.edited" || t == "push.deleted"
}

// Wakes: only the media context's own events wake the runner. A content
// item's or a push's (every item save) waits for its next idle poll, with
// the others that came meanwhile: "used in" follows within half a second,
// and a delete, which waits for the projection to reach the end of the
// log, still counts them.
func (Projector) Wakes(t string) bool { return strings.HasPrefix(t, "media.") }

func (Projector) Name() string     { return "media" }
func (Projector) Tables() []string { return []string{"media_files", "media_usage", "media_apps"} }

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.media_files (
    id          text    PRIMARY KEY,
    app         text    NOT NULL,
    name        text    NOT NULL,
    folder      text    NOT NULL DEFAULT '',
    tags        text[]  NOT NULL DEFAULT '{}',
    alt         jsonb   NOT NULL DEFAULT '{}',
    caption     jsonb   NOT NULL DEFAULT '{}',
    url         text    NOT NULL DEFAULT '',
    sha256      text    NOT NULL DEFAULT '',
    shas        text[]  NOT NULL DEFAULT '{}', -- every version's, oldest first
    size        bigint  NOT NULL DEFAULT 0,
    mime        text    NOT NULL DEFAULT '',
    kind        text    NOT NULL DEFAULT '',
    width       integer NOT NULL DEFAULT 0,
    height      integer NOT NULL DEFAULT 0,
    duration_ms bigint  NOT NULL DEFAULT 0,
    version     integer NOT NULL DEFAULT 1,
    uploaded_by text    NOT NULL DEFAULT '',
    uploaded_at bigint  NOT NULL,
    updated_at  bigint  NOT NULL
);
CREATE INDEX ON %[1]s.media_files (app, uploaded_at DESC, id);
CREATE INDEX ON %[1]s.media_files USING gin (lower(name) gin_trgm_ops);
CREATE INDEX ON %[1]s.media_files USING gin (tags);
CREATE INDEX ON %[1]s.media_files USING hash (url) WHERE url <> '';
CREATE TABLE %[1]s.media_usage (
    ref_type     text    NOT NULL,
    ref_id       text    NOT NULL,
    app          text    NOT NULL,
    name         text    NOT NULL,
    module       text    NOT NULL DEFAULT '',
    files        text[]  NOT NULL DEFAULT '{}',
    live         boolean NOT NULL DEFAULT true,
    published_at bigint  NOT NULL DEFAULT 0,
    removed_at   bigint  NOT NULL DEFAULT 0,
    archived_at  bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (ref_type, ref_id)
);
CREATE INDEX ON %[1]s.media_usage USING gin (files);
CREATE TABLE %[1]s.media_apps (
    app    text    PRIMARY KEY,
    signed boolean NOT NULL
);`, schema))
	return err
}

// Apply folds the batch's media events into media_files, then the items'
// and pushes' into media_usage.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	if err := applyFiles(ctx, db, schema, events); err != nil {
		return fmt.Errorf("media projection: %w", err)
	}
	if err := applyUsage(ctx, db, schema, events); err != nil {
		return fmt.Errorf("media projection: %w", err)
	}
	for _, r := range events {
		if e, ok := r.Data.(media.AccessSet); ok {
			if _, err := db.Exec(ctx, `INSERT INTO `+schema+`.media_apps (app, signed) VALUES ($1, $2)
				ON CONFLICT (app) DO UPDATE SET signed = EXCLUDED.signed`, e.App, e.Signed); err != nil {
				return fmt.Errorf("media projection: %w", err)
			}
		}
	}
	return nil
}

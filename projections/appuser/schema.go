// Package appusers projects app users, their push tokens and tags,
// identified users and pockets into the tables the segmentation read model
// queries, and numbers the apps (HALO's appId is an integer).
package appuser

import (
	"context"
	"fmt"
	"strings"

	"github.com/halocms/halocms/projections"
)

// Projector writes appuser_apps, appusers, appuser_devices, appuser_tags,
// appuser_identified and appuser_pockets.
//
// appusers holds one row per app user, with its devices and tags as jsonb
// in the order the SDK sent them (what the API answers). appuser_devices
// and appuser_tags index the live app users (deleted ones have no rows
// there, so they reach nothing): devices in audience order (app user id,
// token), with the alias copied (aliases never change); tags by lower-case
// name and value, by name alone and by id, each ending in the app user id,
// so that the app users with a tag are read in id order from one index
// range and a segment is walked page by page without sorting.
// Ids and tokens compare byte by byte (COLLATE "C"), as push.DeviceKey
// orders them, whatever the database's collation.
// appuser_apps numbers the apps 1, 2, 3... in the order they were created.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the app-user context's events
// and the creation of apps.
func (Projector) Handles(eventType string) bool {
	return strings.HasPrefix(eventType, "appuser.") || eventType == "identity.app_created"
}

func (Projector) Name() string { return "appusers" }

func (Projector) Tables() []string {
	return []string{"appuser_apps", "appusers", "appuser_devices", "appuser_tags", "appuser_identified", "appuser_pockets"}
}

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.appuser_apps (
    app    text    PRIMARY KEY,
    number integer NOT NULL UNIQUE
);
CREATE TABLE %[1]s.appusers (
    id         text   COLLATE "C" PRIMARY KEY,
    app        text   NOT NULL,
    alias      text   NOT NULL,
    email      text   NOT NULL DEFAULT '',
    identified text   NOT NULL DEFAULT '',
    devices    jsonb  NOT NULL DEFAULT '[]',
    tags       jsonb  NOT NULL DEFAULT '[]',
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    deleted_at bigint
);
CREATE INDEX ON %[1]s.appusers (app, alias);
CREATE INDEX ON %[1]s.appusers (app, identified) WHERE identified <> '';
CREATE INDEX ON %[1]s.appusers (app, id);
CREATE TABLE %[1]s.appuser_devices (
    app_user_id text COLLATE "C" NOT NULL,
    token       text COLLATE "C" NOT NULL,
    app         text NOT NULL,
    alias       text NOT NULL,
    platform    text NOT NULL,
    PRIMARY KEY (app_user_id, token)
);
CREATE INDEX ON %[1]s.appuser_devices (app, app_user_id, token) INCLUDE (alias, platform);
CREATE TABLE %[1]s.appuser_tags (
    app_user_id text COLLATE "C" NOT NULL,
    app         text NOT NULL,
    tag_id      text NOT NULL,
    name        text NOT NULL,
    value       text NOT NULL
);
CREATE INDEX ON %[1]s.appuser_tags (app_user_id);
CREATE INDEX ON %[1]s.appuser_tags (app, lower(name), value, app_user_id);
CREATE INDEX ON %[1]s.appuser_tags (app, lower(name), app_user_id);
CREATE INDEX ON %[1]s.appuser_tags (app, tag_id, app_user_id);
CREATE TABLE %[1]s.appuser_identified (
    id           text   PRIMARY KEY,
    app          text   NOT NULL,
    email        text   NOT NULL,
    name         text   NOT NULL DEFAULT '',
    surname      text   NOT NULL DEFAULT '',
    display_name text   NOT NULL DEFAULT '',
    photo_url    text   NOT NULL DEFAULT '',
    created_at   bigint NOT NULL
);
CREATE INDEX ON %[1]s.appuser_identified (app, lower(email));
CREATE TABLE %[1]s.appuser_pockets (
    identified_id text   PRIMARY KEY,
    app           text   NOT NULL,
    data          jsonb  NOT NULL DEFAULT '{}',
    refs          jsonb  NOT NULL DEFAULT '{}',
    updated_at    bigint NOT NULL
);`, schema))
	return err
}

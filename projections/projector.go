// Package projections is the port projectors implement: a Projector turns
// events, in log order, into read-model tables, writing through the DB it
// is handed (the transaction that also records its checkpoint), and may
// say more of itself (Selective, Compared, Layouter, Announcer). One
// sub-package per bounded context holds its projectors. They depend on
// nothing but this port, their domain and pgx: the engine that runs them
// (runners, rebuilds, read-your-writes waits, status) is
// adapters/projection.
package projections

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/halocms/halocms/domain/event"
)

// DB is what a projector writes through: the transaction that also records
// the projection's checkpoint.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Projector turns events into read-model tables.
//
// Its tables live in a PostgreSQL schema per version of the projection
// ("proj_<name>_v<version>"); readers read them through views of the same
// name in the public schema, which point at the active version. A rebuild
// fills a new version while the old one keeps serving, then switches the
// views atomically.
type Projector interface {
	// Name is stable: it keys the checkpoint and the schemas.
	Name() string
	// Tables lists the table names Create makes; each gets a public view.
	Tables() []string
	// Create makes the (empty) tables inside schema.
	Create(ctx context.Context, db DB, schema string) error
	// Apply applies events, in log order, to the tables inside schema. It
	// sees every event of the log and ignores the types it does not use.
	// Apply should work set-wise where it can: a batch may hold thousands of
	// events during a rebuild.
	Apply(ctx context.Context, db DB, schema string, events []event.Recorded) error
}

// Selective is implemented by a projector that uses only some event
// types: the runtime reads and decodes only those for it.
type Selective interface {
	Handles(eventType string) bool
}

// Unhurried is implemented by a projector that no write waits for at
// once for some of the types it handles: only announcements of the types
// Wakes names wake its runner; the others are applied at its next idle
// poll (half a second at most), many to a batch. (A reader that needs
// them applied waits for the projection's checkpoint, as any other.)
type Unhurried interface {
	Wakes(eventType string) bool
}

// Compared is implemented by a projector some of whose columns hold what
// the log alone does not decide (a version taken from the clock, which a
// rebuild makes newer): a rebuild's Verify compares only the listed
// columns of the tables it names, and every column of the others.
type Compared interface {
	ComparedColumns() map[string][]string
}

// Layouter is implemented by a projector whose tables changed what they
// hold (a column's format, say) while keeping their names. Layout names
// what the projector writes now, and changes with it; each version's
// schema records the layout it was made with, and a projection whose
// tables were made with another one is paused, as one with missing tables
// is, until `cms projections rebuild` makes a new version. A projector
// without Layout has the layout "".
type Layouter interface {
	Layout() string
}

// Announcer is implemented by a projector whose readers may keep rows in
// memory: Changed names the keys (account ids, say) whose rows a batch of
// events changes, or all when it may change any. It sees the batch Apply
// gets, and must name at least every key Apply changes.
type Announcer interface {
	Changed(events []event.Recorded) (keys []string, all bool)
}

package projection

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// SchemaName is the PostgreSQL schema holding version of projection name.
func SchemaName(name string, version int) string {
	return fmt.Sprintf("proj_%s_v%d", name, version)
}

// rebuildRow names the private checkpoint row of a rebuild of projection
// name, beside the live one.
func rebuildRow(name string) string { return name + "@rebuild" }

// ident quotes a (schema-qualified) identifier for SQL.
func ident(parts ...string) string { return pgx.Identifier(parts).Sanitize() }

// lockKey is the advisory lock key for one purpose on one projection.
func lockKey(purpose, name string) string { return "cms.projection." + purpose + ":" + name }

// ensure creates the checkpoint row, the schema of the current version
// with its tables, and the public views, if missing. Concurrent callers
// (several processes starting) serialise on an advisory lock.
func (rt *Runtime) ensure(ctx context.Context, p projections.Projector) error {
	name := p.Name()
	rewound := false
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lockKey("ensure", name)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, name); err != nil {
			return err
		}
		var version int
		var atStart bool
		if err := tx.QueryRow(ctx, `SELECT version, tx_id = '0' AND position = 0 FROM projection_checkpoints WHERE name = $1`,
			name).Scan(&version, &atStart); err != nil {
			return err
		}
		schema := SchemaName(name, version)
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if err := createVersion(ctx, tx, p, schema); err != nil {
				return err
			}
			if !atStart {
				// The tables were lost (dropped by hand?): fresh ones must
				// replay the log from its start.
				rt.log.Warn("projection schema was missing: re-created empty, replaying the log from the start",
					"projection", name, "schema", schema)
				if err := writeCheckpoint(ctx, tx, name, event.Position{}); err != nil {
					return err
				}
				if err := announce(ctx, tx, announcement{Change: Change{Projection: name, All: true}}); err != nil {
					return err
				}
				rewound = true
			} else {
				rt.log.Info("projection created", "projection", name, "version", version, "schema", schema)
			}
		}
		for _, t := range p.Tables() {
			var inSchema, view bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`,
				ident(schema, t), ident("public", t)).Scan(&inSchema, &view); err != nil {
				return err
			}
			if inSchema && !view {
				if _, err := tx.Exec(ctx, `CREATE VIEW `+ident("public", t)+` AS SELECT * FROM `+ident(schema, t)); err != nil {
					return err
				}
			}
		}
		if why, err := outdated(ctx, tx, p, schema); err != nil {
			return err
		} else if why != "" {
			// Not an error: the rebuild that fixes it must be able to run.
			rt.log.Warn("projection tables outdated (the projector's tables changed): the projection stays paused until rebuilt",
				"projection", name, "version", version, "reason", why, "fix", "cms projections rebuild "+name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("projection %s: %w", name, err)
	}
	if rewound {
		rt.watcher.forget(name)
		rt.changedHere(announcement{Change: Change{Projection: name, All: true}})
	}
	return nil
}

// outdatedVersion tells why the version readers and live runners use
// cannot take the projector's writes ("" when it can): see outdated.
func (rt *Runtime) outdatedVersion(ctx context.Context, p projections.Projector) (string, error) {
	var version int
	if err := rt.pool.QueryRow(ctx, `SELECT version FROM projection_checkpoints WHERE name = $1`, p.Name()).Scan(&version); err != nil {
		return "", err
	}
	return outdated(ctx, rt.pool, p, SchemaName(p.Name(), version))
}

// outdated tells why the tables in schema cannot take the projector's
// writes, "" when they can: some of its tables are missing, or they were
// made for another Layout.
func outdated(ctx context.Context, db projections.DB, p projections.Projector, schema string) (string, error) {
	var missing []string
	for _, t := range p.Tables() {
		var ok bool
		if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident(schema, t)).Scan(&ok); err != nil {
			return "", err
		}
		if !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("tables %v missing", missing), nil
	}
	want := layout(p)
	var got string
	if err := db.QueryRow(ctx, `SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1`,
		schema).Scan(&got); err != nil {
		return "", err
	}
	if got != want {
		return fmt.Sprintf("tables of layout %q, the projector writes layout %q", got, want), nil
	}
	return "", nil
}

// layout is p's Layout, "" when it has none.
func layout(p projections.Projector) string {
	if l, ok := p.(projections.Layouter); ok {
		return l.Layout()
	}
	return ""
}

func createVersion(ctx context.Context, tx pgx.Tx, p projections.Projector, schema string) error {
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+ident(schema)); err != nil {
		return err
	}
	if err := p.Create(ctx, tx, schema); err != nil {
		return fmt.Errorf("create tables in %s: %w", schema, err)
	}
	if l := layout(p); l != "" {
		// COMMENT takes no parameters: the layout goes as a literal.
		if _, err := tx.Exec(ctx, `COMMENT ON SCHEMA `+ident(schema)+` IS '`+strings.ReplaceAll(l, "'", "''")+`'`); err != nil {
			return fmt.Errorf("record the layout of %s: %w", schema, err)
		}
	}
	return nil
}

// switchViews points the public views at schema. CREATE OR REPLACE keeps
// views that other views depend on; if the columns changed it cannot, and
// the view is dropped and created again.
func switchViews(ctx context.Context, tx pgx.Tx, tables []string, schema string) error {
	for _, t := range tables {
		view, src := ident("public", t), ident(schema, t)
		if _, err := tx.Exec(ctx, `SAVEPOINT cms_view`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE OR REPLACE VIEW `+view+` AS SELECT * FROM `+src); err != nil {
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT cms_view`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DROP VIEW IF EXISTS `+view); err != nil {
				return fmt.Errorf("replace view %s: %w", t, err)
			}
			if _, err := tx.Exec(ctx, `CREATE VIEW `+view+` AS SELECT * FROM `+src); err != nil {
				return fmt.Errorf("create view %s: %w", t, err)
			}
		}
		if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT cms_view`); err != nil {
			return err
		}
	}
	return nil
}

// dropSchema drops a projection version's schema, giving up (with a
// warning) if it cannot get the locks in time.
func (rt *Runtime) dropSchema(ctx context.Context, schema string, timeout time.Duration) bool {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, timeout.Milliseconds())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+ident(schema)+` CASCADE`)
		return err
	})
	if err != nil {
		rt.log.Warn("could not drop old projection schema; the next rebuild will", "schema", schema, "err", err)
		return false
	}
	return true
}

// dropStale drops schemas of versions older than current left by earlier
// rebuilds.
func (rt *Runtime) dropStale(ctx context.Context, name string, current int, timeout time.Duration) {
	re := regexp.MustCompile(`^proj_` + regexp.QuoteMeta(name) + `_v([0-9]+)$`)
	rows, err := rt.pool.Query(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, "proj_"+name+"_v")
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var s string
		if rows.Scan(&s) != nil {
			continue
		}
		if m := re.FindStringSubmatch(s); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil && v < current {
				stale = append(stale, s)
			}
		}
	}
	rows.Close()
	for _, s := range stale {
		rt.dropSchema(ctx, s, timeout)
	}
}

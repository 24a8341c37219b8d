package content_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	projcontent "github.com/halocms/halocms/projections/content"
)

// TestFieldsVersions checks what the read model's in-memory copies rely on
// to follow the tables by the rows written since their version (see
// bumpVersions): through a random history applied in small batches, every
// content_fields row whose content a batch changed (or that it added)
// carries the app's new version (but the rows of a module it deleted:
// the module's revision tells readers), every other row keeps its version, no
// row is ever past its app's version, and the app's versions grow. The
// tables' epoch (projections/content.Epoch) is there from the start and
// never moves.
func TestFieldsVersions(t *testing.T) {
	t.Parallel()
	w := randomHistory(t, 20261129, 500)
	evs := w.rec.evs
	ctx, pool := setup(t)
	epoch := appVersion(t, ctx, pool, projcontent.Epoch)
	if epoch == 0 {
		t.Fatal("no epoch row in content_versions")
	}
	type row struct {
		content string
		version int64
	}
	read := func() (map[string]row, map[string]int64) {
		rows := map[string]row{}
		r, err := pool.Query(ctx, `SELECT f.item_id, (to_jsonb(f) - 'version')::text, f.version, m.app
			FROM content_fields f JOIN content_modules m ON m.id = f.module WHERE m.deleted_at IS NULL`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		apps := map[string]int64{}
		for r.Next() {
			var id, c, app string
			var v int64
			if err := r.Scan(&id, &c, &v, &app); err != nil {
				t.Fatal(err)
			}
			rows[id] = row{c, v}
			if apps[app] == 0 {
				apps[app] = appVersion(t, ctx, pool, app)
			}
			if v > apps[app] {
				t.Fatalf("row %s at version %d, past its app's %d", id, v, apps[app])
			}
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return rows, apps
	}
	rng := rand.New(rand.NewPCG(5, 6))
	before, versions := read()
	changed := 0
	for i := 0; i < len(evs); {
		n := min(1+rng.IntN(6), len(evs)-i)
		apply(t, ctx, pool, evs[i:i+n]...)
		i += n
		after, now := read()
		for app, v := range now {
			if v < versions[app] {
				t.Fatalf("app %s went back from version %d to %d", app, versions[app], v)
			}
		}
		for id, r := range after {
			was, ok := before[id]
			switch {
			case !ok || was.content != r.content:
				changed++
				if !ok && r.version == 0 || ok && r.version <= was.version {
					t.Fatalf("batch at event %d changed row %s but left its version at %d (was %d)", i, id, r.version, was.version)
				}
			case r.version != was.version && r.version <= was.version:
				t.Fatalf("row %s went back from version %d to %d", id, was.version, r.version)
			}
		}
		before, versions = after, now
	}
	if changed < 100 {
		t.Fatalf("only %d row changes seen: the history tests little", changed)
	}
	if got := appVersion(t, ctx, pool, projcontent.Epoch); got != epoch {
		t.Fatalf("the epoch moved from %d to %d", epoch, got)
	}
}

func appVersion(t *testing.T, ctx context.Context, pool *pgxpool.Pool, app string) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT version FROM content_versions WHERE app = $1), 0)`, app).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A rebuild is verified on every column of content_fields but version
// (its batches' versions come from the clock): a column added later and
// not compared would go unchecked.
func TestComparedFields(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	var cols []string
	r, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'content_fields' AND column_name <> 'version' ORDER BY column_name`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var c string
		if err := r.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(projcontent.Projector{}.ComparedColumns()["content_fields"]))
	if len(cols) < 20 || !slices.Equal(got, cols) {
		t.Fatalf("content_fields compared on %v, want every column but version: %v", got, cols)
	}
}

package appuser_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/identity"
	projappuser "github.com/halocms/halocms/projections/appuser"
)

// recorder builds a log of recorded events with increasing positions.
type recorder struct {
	pos int64
	at  time.Time
	evs []event.Recorded
}

func (r *recorder) add(stream string, data any) {
	r.pos++
	r.at = r.at.Add(time.Millisecond)
	r.evs = append(r.evs, event.Recorded{
		Position: event.Position{TxID: uint64(r.pos), Pos: r.pos}, StreamID: stream, StreamVersion: r.pos,
		Type: data.(interface{ EventType() string }).EventType(), SchemaVersion: 1, Data: data, RecordedAt: r.at,
	})
}

func setup(t *testing.T) (context.Context, *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	if err := (projappuser.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	return ctx, pool
}

func apply(t *testing.T, ctx context.Context, pool *pgxpool.Pool, evs ...event.Recorded) {
	t.Helper()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := (projappuser.Projector{}).Apply(ctx, tx, "public", evs); err != nil {
		t.Fatalf("apply %d events: %v", len(evs), err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

var dumps = []string{
	`SELECT row_to_json(x)::text FROM appuser_apps x ORDER BY app`,
	`SELECT row_to_json(x)::text FROM appusers x ORDER BY id`,
	`SELECT row_to_json(x)::text FROM appuser_devices x ORDER BY app_user_id, token`,
	`SELECT row_to_json(x)::text FROM appuser_tags x ORDER BY app_user_id, tag_id, name, value`,
	`SELECT row_to_json(x)::text FROM appuser_identified x ORDER BY id`,
	`SELECT row_to_json(x)::text FROM appuser_pockets x ORDER BY identified_id`,
}

func dump(t *testing.T, ctx context.Context, db *pgxpool.Pool) [][]string {
	t.Helper()
	out := make([][]string, len(dumps))
	for i, q := range dumps {
		out[i] = pgtest.Strings(t, db, q)
	}
	return out
}

// randomLog makes a log of every event type over a few apps, app users,
// identified users and pockets.
func randomLog(rng *rand.Rand, n int) []event.Recorded {
	r := &recorder{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	apps := []string{}
	var users []appuser.AppUser
	pockets := map[string]appuser.Pocket{}
	tagID := 0
	newID := func() string { tagID++; return fmt.Sprintf("t%05d", tagID) }
	profile := func() appuser.Profile {
		var p appuser.Profile
		for range rng.IntN(3) {
			p.Devices = append(p.Devices, appuser.Device{Platform: []string{"android", "ios"}[rng.IntN(2)], Token: fmt.Sprint("tok", rng.IntN(50))})
		}
		for range rng.IntN(4) {
			p.Tags = append(p.Tags, appuser.Tag{Name: fmt.Sprint("Tag", rng.IntN(5)), Value: fmt.Sprint(rng.IntN(3)),
				TagType: []string{appuser.SystemTag, appuser.UserTag}[rng.IntN(2)]})
		}
		return p
	}
	for len(r.evs) < n {
		switch k := rng.IntN(10); {
		case k == 0 || len(apps) == 0:
			id := fmt.Sprintf("app%02d", len(apps))
			apps = append(apps, id)
			r.add("app-"+id, identity.AppCreated{AppID: id, Name: id, ClientID: "c" + id})
		case k <= 3 || len(users) == 0:
			id := fmt.Sprintf("u%04d", len(users))
			evs, err := appuser.Create(appuser.AppUser{}, id, apps[rng.IntN(len(apps))], "anonymous-"+id, profile(), newID)
			if err != nil {
				panic(err)
			}
			u := appuser.AppUser{}.Apply(evs[0])
			users = append(users, u)
			r.add(appuser.Stream(id), evs[0])
		case k <= 7:
			i := rng.IntN(len(users))
			u := users[i]
			var evs []any
			switch rng.IntN(8) {
			case 0, 1, 2:
				evs, _ = u.Update(profile(), rng.IntN(2) == 0, newID)
			case 3, 4:
				if len(u.Devices) > 0 {
					evs = u.RemoveToken(u.Devices[0].Token, "invalid_token")
				}
			case 5, 6:
				evs, _ = u.Link(fmt.Sprint("identified-", rng.IntN(4)))
			case 7:
				evs, _ = u.Delete()
			}
			for _, e := range evs {
				users[i] = users[i].Apply(e)
				r.add(appuser.Stream(u.ID), e)
			}
		case k == 8:
			id := fmt.Sprint("identified-", rng.IntN(1000))
			app := apps[rng.IntN(len(apps))]
			evs, err := appuser.Register(appuser.Identified{}, appuser.EmailClaim{}, id, app, id+"@example.com", "hash",
				appuser.UserProfile{Name: "N" + id})
			if err != nil {
				panic(err)
			}
			r.add(appuser.IdentifiedStream(id), evs[0])
			r.add(appuser.IdentifiedEmailStream(app, id+"@example.com"), evs[1])
		default:
			id := fmt.Sprint("identified-", rng.IntN(5))
			p := pockets[id]
			c := appuser.PocketChange{References: map[string][]string{}}
			if rng.IntN(2) == 0 {
				c.SetData, c.Data = true, map[string]any{"n": fmt.Sprint(rng.IntN(100))}
			}
			for range rng.IntN(3) {
				name := fmt.Sprint("ref", rng.IntN(4))
				if rng.IntN(3) == 0 {
					c.References[name] = nil
				} else {
					c.References[name] = []string{fmt.Sprint(rng.IntN(9))}
				}
			}
			evs, err := p.Change(id, "app00", c)
			if err != nil {
				panic(err)
			}
			for _, e := range evs {
				pockets[id] = p.Apply(e)
				r.add(appuser.PocketStream(id), e)
			}
		}
	}
	return r.evs
}

// One batch or many small ones, the tables end up the same.
func TestOneBatchEqualsManySmallOnes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	log := randomLog(rng, 1500)
	ctx, one := setup(t)
	apply(t, ctx, one, log...)
	_, many := setup(t)
	for rest := log; len(rest) > 0; {
		n := min(1+rng.IntN(40), len(rest))
		apply(t, ctx, many, rest[:n]...)
		rest = rest[n:]
	}
	a, b := dump(t, ctx, one), dump(t, ctx, many)
	for i := range dumps {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("%s: one batch and many differ (%d vs %d rows)", dumps[i], len(a[i]), len(b[i]))
		}
		if len(a[i]) == 0 {
			t.Errorf("%s: no rows; the log should exercise every table", dumps[i])
		}
	}
}

func TestTablesFollowTheAppUsers(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	r := &recorder{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	r.add("app-a", identity.AppCreated{AppID: "a", Name: "A"})
	r.add("app-b", identity.AppCreated{AppID: "b", Name: "B"})
	r.add(appuser.Stream("u1"), appuser.Created{AppUserID: "u1", App: "a", Alias: "anonymous-1",
		Devices: []appuser.Device{{Platform: "ios", Token: "t1"}, {Platform: "android", Token: "t2"}},
		Tags:    []appuser.Tag{{ID: "g1", Name: "Color", Value: "red", TagType: appuser.UserTag}}})
	r.add(appuser.Stream("u2"), appuser.Created{AppUserID: "u2", App: "a", Alias: "anonymous-2",
		Devices: []appuser.Device{{Platform: "ios", Token: "t3"}}, Tags: []appuser.Tag{}})
	apply(t, ctx, pool, r.evs...)
	r.evs = nil
	r.add("app-c", identity.AppCreated{AppID: "c", Name: "C"})
	r.add(appuser.Stream("u1"), appuser.TokenRemoved{AppUserID: "u1", App: "a", Token: "t1", Reason: "invalid_token"})
	r.add(appuser.Stream("u1"), appuser.Linked{AppUserID: "u1", App: "a", IdentifiedID: "identified-9"})
	r.add(appuser.Stream("u2"), appuser.Deleted{AppUserID: "u2", App: "a"})
	apply(t, ctx, pool, r.evs...)

	if got := pgtest.Strings(t, pool, `SELECT app || '=' || number FROM appuser_apps ORDER BY number`); !slices.Equal(got, []string{"a=1", "b=2", "c=3"}) {
		t.Errorf("app numbers %v, want a=1 b=2 c=3 in creation order", got)
	}
	if got := pgtest.Strings(t, pool, `SELECT app_user_id || ':' || token || ':' || alias || ':' || platform FROM appuser_devices ORDER BY 1`); !slices.Equal(got, []string{"u1:t2:anonymous-1:android"}) {
		t.Errorf("devices %v: the removed token and the deleted app user's token must be gone", got)
	}
	if got := pgtest.Strings(t, pool, `SELECT app_user_id || ':' || name || '=' || value FROM appuser_tags ORDER BY 1`); !slices.Equal(got, []string{"u1:Color=red"}) {
		t.Errorf("tags %v", got)
	}
	if got := pgtest.Strings(t, pool, `SELECT id || ':' || identified || ':' || (deleted_at IS NOT NULL) || ':' || devices::text FROM appusers ORDER BY id`); !slices.Equal(got,
		[]string{`u1:identified-9:false:[{"token": "t2", "platform": "android"}]`, `u2::true:[{"token": "t3", "platform": "ios"}]`}) {
		t.Errorf("app users %v", got)
	}
}

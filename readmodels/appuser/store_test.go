package appuser_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/push"
	projappuser "github.com/halocms/halocms/projections/appuser"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
)

// world is a set of app users projected into fresh tables, and the same
// app users as plain Go values to check the queries against.
type world struct {
	ctx   context.Context
	pool  *pgxpool.Pool
	store *rmappuser.Store
	users []appuser.AppUser // final states
	pos   int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	if err := (projappuser.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	return &world{ctx: ctx, pool: pool, store: rmappuser.New(pool)}
}

// project applies domain events as one batch.
func (w *world) project(t *testing.T, data ...any) {
	t.Helper()
	evs := make([]event.Recorded, len(data))
	for i, d := range data {
		w.pos++
		evs[i] = event.Recorded{Position: event.Position{TxID: uint64(w.pos), Pos: w.pos}, StreamVersion: 1,
			Type: d.(interface{ EventType() string }).EventType(), SchemaVersion: 1, Data: d,
			RecordedAt: time.UnixMilli(1_700_000_000_000 + w.pos)}
	}
	tx, err := w.pool.Begin(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(w.ctx) //nolint:errcheck
	if err := (projappuser.Projector{}).Apply(w.ctx, tx, "public", evs); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(w.ctx); err != nil {
		t.Fatal(err)
	}
}

var tagNames = []string{"Color", "color", "Size", "Platform Name", "Pet"}

// randomWorld makes n app users over apps a and b: random tags (names
// that differ only by case among them), 0–3 devices, some signed in by an
// identified user, some deleted.
func randomWorld(t *testing.T, rng *rand.Rand, n int) *world {
	w := newWorld(t)
	var evs []any
	evs = append(evs, identity.AppCreated{AppID: "a"}, identity.AppCreated{AppID: "b"})
	tagID := 0
	for i := range n {
		id := fmt.Sprintf("%024x", rng.Uint64())
		app := []string{"a", "a", "a", "b"}[rng.IntN(4)]
		p := appuser.Profile{}
		for range rng.IntN(4) {
			p.Devices = append(p.Devices, appuser.Device{Platform: "ios", Token: fmt.Sprintf("tok-%c%d", 'A'+rng.IntN(3), rng.IntN(1000))})
		}
		for range rng.IntN(4) {
			if rng.IntN(5) == 0 {
				p.Tags = append(p.Tags, appuser.Tag{ID: fmt.Sprintf("%024d", 100+rng.IntN(3)), Name: "Market", TagType: appuser.MarketTag})
				continue
			}
			p.Tags = append(p.Tags, appuser.Tag{Name: tagNames[rng.IntN(len(tagNames))], Value: fmt.Sprint(rng.IntN(3))})
		}
		created, err := appuser.Create(appuser.AppUser{}, id, app, fmt.Sprintf("anonymous-%d", i), p, func() string { tagID++; return fmt.Sprint("tag", tagID) })
		if err != nil {
			t.Fatal(err)
		}
		u := appuser.AppUser{}.Apply(created[0])
		evs = append(evs, created[0])
		if rng.IntN(3) == 0 {
			l, _ := u.Link(fmt.Sprint("identified-", rng.IntN(5)))
			u = u.Apply(l[0])
			evs = append(evs, l[0])
		}
		if rng.IntN(10) == 0 {
			d, _ := u.Delete()
			u = u.Apply(d[0])
			evs = append(evs, d[0])
		}
		w.users = append(w.users, u)
	}
	w.project(t, evs...)
	return w
}

// want is the reference answer: the devices of live app users of app that
// t reaches, in key order, after `after`.
func (w *world) want(app string, t push.Target, after push.DeviceKey) []push.Device {
	hasTag := func(u appuser.AppUser, f push.TagFilter) bool {
		return slices.ContainsFunc(u.Tags, func(g appuser.Tag) bool {
			if f.ID != "" {
				return g.ID == f.ID
			}
			return f.Name != "" && strings.EqualFold(g.Name, f.Name) && (f.Value == "" || g.Value == f.Value)
		})
	}
	var out []push.Device
	for _, u := range w.users {
		if u.App != app || u.Deleted {
			continue
		}
		reached := slices.Contains(t.Aliases, u.Alias) || (u.Identified != "" && slices.Contains(t.Identified, u.Identified))
		if len(t.Tags) > 0 {
			n := 0
			for _, f := range t.Tags {
				if hasTag(u, f) {
					n++
				}
			}
			if (t.TagMode == push.Total && n == len(t.Tags)) || (t.TagMode != push.Total && n > 0) {
				reached = true
			}
		}
		if !reached {
			continue
		}
		for _, d := range u.Devices {
			dev := push.Device{AppUserID: u.ID, Alias: u.Alias, Platform: push.Platform(d.Platform), Token: d.Token}
			if after.Less(dev.Key()) {
				out = append(out, dev)
			}
		}
	}
	slices.SortFunc(out, func(a, b push.Device) int {
		switch {
		case a.Key().Less(b.Key()):
			return -1
		case b.Key().Less(a.Key()):
			return 1
		}
		return 0
	})
	return out
}

func (w *world) devices(t *testing.T, app string, tg push.Target, after push.DeviceKey) []push.Device {
	t.Helper()
	var got []push.Device
	if err := w.store.Devices(w.ctx, app, tg, after, func(d push.Device) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func randomTarget(rng *rand.Rand, w *world) push.Target {
	var t push.Target
	switch rng.IntN(5) {
	case 0:
		for range 1 + rng.IntN(5) {
			t.Aliases = append(t.Aliases, w.users[rng.IntN(len(w.users))].Alias)
		}
		t.Aliases = append(t.Aliases, "anonymous-nobody")
	case 1:
		t.Identified = []string{fmt.Sprint("identified-", rng.IntN(5)), "identified-unknown"}
	default:
		for range 1 + rng.IntN(3) {
			f := push.TagFilter{Name: strings.ToUpper(tagNames[rng.IntN(len(tagNames))])}
			switch rng.IntN(4) {
			case 0:
				f = push.TagFilter{ID: fmt.Sprintf("%024d", 100+rng.IntN(3))}
			case 1:
			default:
				f.Value = fmt.Sprint(rng.IntN(3))
			}
			t.Tags = append(t.Tags, f)
		}
		t.TagMode = []push.TagMode{push.Partial, push.Total, ""}[rng.IntN(3)]
	}
	return t
}

// Devices answers what the target semantics say, in key order, page size
// whatever, and resumes exactly after any key.
func TestDevicesMatchesTheReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	w := randomWorld(t, rng, 400)
	nonEmpty := 0
	for i := range 150 {
		tg := randomTarget(rng, w)
		app := []string{"a", "b"}[rng.IntN(2)]
		w.store.PageSize = 1 + rng.IntN(40)
		want := w.want(app, tg, push.DeviceKey{})
		got := w.devices(t, app, tg, push.DeviceKey{})
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: target %+v app %s page %d: got %d devices, want %d\n got %v\nwant %v", i, tg, app, w.store.PageSize, len(got), len(want), got, want)
		}
		if len(want) > 0 {
			nonEmpty++
			after := want[rng.IntN(len(want))].Key()
			if rest := w.devices(t, app, tg, after); !slices.Equal(rest, w.want(app, tg, after)) {
				t.Fatalf("case %d: resuming after %+v: got %v", i, after, rest)
			}
			// A key between devices (a token that is not there) resumes too.
			mid := push.DeviceKey{AppUserID: after.AppUserID, Token: after.Token + "~"}
			if rest := w.devices(t, app, tg, mid); !slices.Equal(rest, w.want(app, tg, mid)) {
				t.Fatalf("case %d: resuming after %+v: got %v", i, mid, rest)
			}
		}
	}
	if nonEmpty < 50 {
		t.Errorf("only %d of 150 targets reached anyone; the test data is too thin", nonEmpty)
	}
	if got := w.devices(t, "a", push.Target{}, push.DeviceKey{}); len(got) != 0 {
		t.Errorf("an empty target reached %d devices", len(got))
	}
	if got := w.devices(t, "a", push.Target{Tags: []push.TagFilter{{}}}, push.DeviceKey{}); len(got) != 0 {
		t.Errorf("a filter naming nothing reached %d devices", len(got))
	}
}

func TestDevicesStopsOnError(t *testing.T) {
	t.Parallel()
	w := randomWorld(t, rand.New(rand.NewPCG(1, 2)), 100)
	w.store.PageSize = 5
	stop := errors.New("stop")
	calls := 0
	err := w.store.Devices(w.ctx, "a", push.Target{Tags: []push.TagFilter{{Name: "color"}, {Name: "size"}, {Name: "pet"}}}, push.DeviceKey{},
		func(push.Device) error {
			calls++
			if calls == 7 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || calls != 7 {
		t.Errorf("err %v after %d calls, want the callback's error after 7", err, calls)
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.project(t, identity.AppCreated{AppID: "a"}, identity.AppCreated{AppID: "b"},
		appuser.Created{AppUserID: "u1", App: "a", Alias: "anonymous-1", Email: "x@example.com",
			Devices: []appuser.Device{{Platform: "android", Token: "t1"}},
			Tags:    []appuser.Tag{{ID: "g1", Name: "Color", Value: "red", TagType: appuser.UserTag}}},
		appuser.Created{AppUserID: "u2", App: "a", Alias: "anonymous-2", Devices: []appuser.Device{}, Tags: []appuser.Tag{}},
		appuser.Created{AppUserID: "u3", App: "b", Alias: "anonymous-3", Devices: []appuser.Device{}, Tags: []appuser.Tag{}},
		appuser.Deleted{AppUserID: "u2", App: "a"},
		appuser.IdentifiedRegistered{IdentifiedID: "identified-1", App: "a", Email: "Ann@example.com",
			Profile: appuser.UserProfile{Name: "Ann", Surname: "Lee", DisplayName: "Ann Lee"}},
		appuser.IdentifiedRegistered{IdentifiedID: "identified-2", App: "a", Email: "bob@example.com",
			Profile: appuser.UserProfile{Name: "Bob"}},
		appuser.PocketUpdated{IdentifiedID: "identified-1", App: "a", DataReplaced: true, Data: map[string]any{"n": 12345678901234567},
			References: map[string][]string{"favorites": {"f1"}}},
	)
	ctx, s := w.ctx, w.store

	u, err := s.AppUser(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if u.App != "a" || u.AppNumber != 1 || u.Alias != "anonymous-1" || u.Email != "x@example.com" ||
		!slices.Equal(u.Devices, []rmappuser.Device{{Platform: "android", Token: "t1"}}) ||
		!slices.Equal(u.Tags, []rmappuser.Tag{{ID: "g1", Name: "Color", Value: "red", TagType: appuser.UserTag}}) ||
		u.CreatedAt == 0 || u.UpdatedAt < u.CreatedAt {
		t.Errorf("app user %+v", u)
	}
	if _, err := s.AppUser(ctx, "u2"); !fault.Is(err, fault.NotFound) {
		t.Errorf("deleted app user: %v, want not found", err)
	}
	if got, err := s.AppUserByAlias(ctx, "a", "anonymous-1"); err != nil || got.ID != "u1" {
		t.Errorf("by alias: %+v %v", got, err)
	}
	for _, c := range [][2]string{{"b", "anonymous-1"}, {"a", "anonymous-2"}, {"a", "nope"}} {
		if _, err := s.AppUserByAlias(ctx, c[0], c[1]); !fault.Is(err, fault.NotFound) {
			t.Errorf("alias %s in app %s: %v, want not found", c[1], c[0], err)
		}
	}
	if got, _ := s.UnknownAliases(ctx, "a", []string{"anonymous-3", "anonymous-1", "anonymous-2", "anonymous-3"}); !slices.Equal(got, []string{"anonymous-3", "anonymous-2"}) {
		t.Errorf("unknown aliases %v, want [anonymous-3 anonymous-2] (other app's, deleted; once each, in order)", got)
	}
	if got, _ := s.UnknownIdentified(ctx, "b", []string{"identified-1", "identified-9"}); !slices.Equal(got, []string{"identified-1", "identified-9"}) {
		t.Errorf("unknown identified in b: %v", got)
	}
	if got, _ := s.UnknownIdentified(ctx, "a", []string{"identified-1", "identified-9"}); !slices.Equal(got, []string{"identified-9"}) {
		t.Errorf("unknown identified in a: %v", got)
	}
	if n, _ := s.AppNumber(ctx, "b"); n != 2 {
		t.Errorf("app number of b: %d", n)
	}
	if app, _ := s.AppByNumber(ctx, 2); app != "b" {
		t.Errorf("app 2: %q", app)
	}
	if _, err := s.AppByNumber(ctx, 9); !fault.Is(err, fault.NotFound) {
		t.Errorf("app 9: %v", err)
	}

	res, err := s.Search(ctx, rmappuser.SegmentQuery{App: "a", Tags: []rmappuser.TagFilter{{Name: "COLOR", Value: "red"}}, Limit: 10})
	if err != nil || res.Total != 1 || len(res.Items) != 1 || res.Items[0].ID != "u1" {
		t.Errorf("search: %+v %v", res, err)
	}
	res, _ = s.Search(ctx, rmappuser.SegmentQuery{App: "a", Tags: []rmappuser.TagFilter{{Name: "color"}, {Name: "size"}}, Total: true, Limit: 10})
	if res.Total != 0 || len(res.Items) != 0 {
		t.Errorf("total search: %+v", res)
	}
	res, _ = s.Search(ctx, rmappuser.SegmentQuery{App: "a", Limit: 10, Offset: 5})
	if res.Total != 1 || len(res.Items) != 0 {
		t.Errorf("page past the end: %+v", res)
	}

	ids, err := s.SearchIdentified(ctx, rmappuser.IdentifiedQuery{App: "a", Text: "ANN", Limit: 10})
	if err != nil || ids.Total != 1 || ids.Items[0].ID != "identified-1" || ids.Items[0].DisplayName != "Ann Lee" {
		t.Errorf("identified search: %+v %v", ids, err)
	}
	ids, _ = s.SearchIdentified(ctx, rmappuser.IdentifiedQuery{App: "a", Text: "%", Limit: 10})
	if ids.Total != 0 {
		t.Errorf("a wildcard searched as a wildcard: %+v", ids)
	}
	ids, _ = s.SearchIdentified(ctx, rmappuser.IdentifiedQuery{App: "a", Limit: 1, Offset: 1})
	if ids.Total != 2 || len(ids.Items) != 1 || ids.Items[0].ID != "identified-2" {
		t.Errorf("identified page 2: %+v", ids)
	}

	p, err := s.Pocket(ctx, "identified-1")
	if err != nil || fmt.Sprint(p.Data["n"]) != "12345678901234567" || !slices.Equal(p.References["favorites"], []string{"f1"}) {
		t.Errorf("pocket %+v %v", p, err)
	}
	if p, err := s.Pocket(ctx, "identified-2"); err != nil || len(p.Data) != 0 || p.References == nil {
		t.Errorf("empty pocket %+v %v", p, err)
	}
}

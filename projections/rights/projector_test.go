package rights_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
	projrights "github.com/halocms/halocms/projections/rights"
)

// TestLiveAndRebuiltEqualTheDomainFold appends a random history of grants
// and revokes, lets the live projection apply it (in batches of varied
// sizes), checks the table against the domain's own fold of the same
// events, then rebuilds with verification: the rebuilt tables must equal
// the live ones.
func TestLiveAndRebuiltEqualTheDomainFold(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{LiveBatchSize: 37}, projrights.Projector{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	defer func() { stop(); <-done }()

	rng := rand.New(rand.NewPCG(1, 2))
	users := []string{"u1", "u2", "u3", "u4"}
	apps := []string{"a1", "a2"}
	perms := []string{"read", "write", "update", "delete"}
	state := map[string]rights.Rights{}
	var last event.Position
	for i := 0; i < 600; i++ {
		u := users[rng.IntN(len(users))]
		r, ok := state[u]
		if !ok {
			r = rights.NewRights(u)
		}
		kind, id := "app", ""
		switch rng.IntN(3) {
		case 1:
			kind, id = "module", fmt.Sprintf("m%d", rng.IntN(3))
		case 2:
			kind, id = "item", fmt.Sprintf("i%d", rng.IntN(3))
		}
		var ps []string
		for _, p := range perms {
			if rng.IntN(2) == 0 {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			ps = []string{"read"}
		}
		var ev any
		if rng.IntN(3) == 0 {
			ev = rights.Revoked{UserID: u, AppID: apps[rng.IntN(2)], ScopeKind: kind, ScopeID: id, Permissions: ps, By: "system"}
		} else {
			ev = rights.Granted{UserID: u, AppID: apps[rng.IntN(2)], ScopeKind: kind, ScopeID: id, Permissions: ps, By: "system"}
		}
		res, err := store.Append(ctx, rights.Stream(u), event.AnyVersion, event.Event{Data: ev})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Last
		state[u] = r.Apply(ev)
	}
	if !rt.WaitForBound(ctx, time.Minute, last, "rights") {
		t.Fatal("the rights projection did not catch up")
	}

	var want []string
	for u, r := range state {
		for _, e := range r.List("") {
			want = append(want, fmt.Sprintf("%s|%s|%s|%s|%s", u, e.App, e.Scope.Kind, e.Scope.ID, strings.Join(e.Permissions, ",")))
		}
	}
	sort.Strings(want)
	if got := table(t, ctx, pool); !slices.Equal(got, want) {
		t.Fatalf("live projection differs from the domain fold:\n got %v\nwant %v", got, want)
	}

	res, err := rt.RebuildWith(ctx, "rights", projection.RebuildOptions{BatchSize: 53, Verify: true})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !res.Verified || res.Version != 2 {
		t.Fatalf("rebuild result %+v: want verified, version 2", res)
	}
	if got := table(t, ctx, pool); !slices.Equal(got, want) {
		t.Fatalf("rebuilt projection differs from the domain fold:\n got %v\nwant %v", got, want)
	}
}

func table(t *testing.T, ctx context.Context, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT user_id || '|' || app_id || '|' || scope_kind || '|' || scope_id || '|' || array_to_string(permissions, ',')
		FROM rights_grants`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

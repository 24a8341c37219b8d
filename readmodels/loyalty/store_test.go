package loyalty_test

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

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/projections"
	projappuser "github.com/halocms/halocms/projections/appuser"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	"github.com/halocms/halocms/projections/loyalty/loyaltytest"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// person is an identified user of the world.
type person struct {
	id, app, email, name, surname, display string
	created                                time.Time
	aliases                                []string // of live app users signed in as them
}

// world is identified users, app users and a loyalty history projected
// into fresh tables, and the same as Go values to check the queries
// against.
type world struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *rmloyalty.Store
	sim    *loyaltytest.Sim
	people []person
	log    []event.Recorded
}

var names = []string{"Ann", "anna", "Bob", "Chloé", "Dan_1", "Eve%", "Zoë", "bob"}

func appOf(id string) string { return []string{"a", "b"}[int(id[len(id)-1])%2] }

// newWorld registers 40 identified users (user000…user039; the app by the
// id's parity, as loyaltytest's Random places accounts) with app users
// signed in as some of them, then projects a random loyalty history of
// the first 30.
func newWorld(t *testing.T, steps int) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	for _, p := range []interface {
		Create(context.Context, projections.DB, string) error
	}{projappuser.Projector{}, projloyalty.Projector{}} {
		if err := p.Create(ctx, pool, "public"); err != nil {
			t.Fatal(err)
		}
	}
	w := &world{ctx: ctx, pool: pool, store: rmloyalty.New(pool)}
	var evs []event.Recorded
	var pos int64
	rec := func(at time.Time, data any) {
		pos++
		evs = append(evs, event.Recorded{Position: event.Position{TxID: uint64(pos), Pos: pos}, StreamVersion: 1,
			Type: data.(interface{ EventType() string }).EventType(), SchemaVersion: 1, Data: data, RecordedAt: at})
	}
	for i := range 40 {
		id := fmt.Sprintf("user%03d", i)
		p := person{id: id, app: appOf(id), email: fmt.Sprintf("%s.%d@Example.com", strings.ToLower(names[i%len(names)]), i),
			name: names[i%len(names)], surname: fmt.Sprintf("Surname%d", i%5), display: fmt.Sprintf("D%02d", i),
			created: t0.Add(-time.Duration(40-i) * time.Hour)}
		if i%9 == 0 {
			p.surname = "O'Anna"
		}
		rec(p.created, appuser.IdentifiedRegistered{IdentifiedID: id, App: p.app, Email: p.email,
			Profile: appuser.UserProfile{Name: p.name, Surname: p.surname, DisplayName: p.display}})
		for k := range i % 3 {
			au := fmt.Sprintf("au-%s-%d", id, k)
			alias := fmt.Sprintf("anonymous-%d-%d", i, k)
			rec(p.created, appuser.Created{AppUserID: au, App: p.app, Alias: alias})
			rec(p.created, appuser.Linked{AppUserID: au, App: p.app, IdentifiedID: id})
			if k == 1 && i%2 == 0 {
				rec(p.created, appuser.Deleted{AppUserID: au, App: p.app})
				continue
			}
			p.aliases = append(p.aliases, alias)
		}
		w.people = append(w.people, p)
	}
	applyTx(t, ctx, pool, projappuser.Projector{}, evs)

	w.sim = loyaltytest.New(t0)
	w.sim.Random(rand.New(rand.NewPCG(5, 6)), 30, steps)
	w.log = w.sim.Recorded()
	for rest := w.log; len(rest) > 0; {
		n := min(200, len(rest))
		applyTx(t, ctx, pool, projloyalty.Projector{}, rest[:n])
		rest = rest[n:]
	}
	return w
}

func applyTx(t *testing.T, ctx context.Context, pool *pgxpool.Pool, p interface {
	Apply(context.Context, projections.DB, string, []event.Recorded) error
}, evs []event.Recorded) {
	t.Helper()
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return p.Apply(ctx, tx, "public", evs) }); err != nil {
		t.Fatal(err)
	}
}

// wantTxs lists an account's transactions, oldest first, as
// "id|kind|amount|balance|by", from the log.
func (w *world) wantTxs(account string) []string {
	var out []string
	for _, r := range w.log {
		var s string
		switch e := r.Data.(type) {
		case loyalty.PointsEarned:
			s = fmt.Sprintf("%s|earn|%d|%d", e.Transaction, e.Amount, e.Balance)
		case loyalty.PointsRedeemed:
			s = fmt.Sprintf("%s|redeem|%d|%d", e.Transaction, -e.Amount, e.Balance)
		case loyalty.PointsAdjusted:
			s = fmt.Sprintf("%s|adjust|%d|%d", e.Transaction, e.Amount, e.Balance)
		case loyalty.PointsExpired:
			s = fmt.Sprintf("%s|expire|%d|%d", e.Transaction, -e.Amount, e.Balance)
		case loyalty.BalanceCorrected:
			s = fmt.Sprintf("%s|correction|0|%d", r.Meta.EventID, e.New)
		default:
			continue
		}
		if strings.TrimPrefix(r.StreamID, "loyalty-") == account {
			out = append(out, s+"|"+r.Meta.Actor)
		}
	}
	return out
}

func txStrings(ts []rmloyalty.Transaction) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("%s|%s|%d|%d|%s", t.ID, t.Kind, t.Amount, t.Balance, t.By)
	}
	return out
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func (w *world) balance(id string) (int64, int) {
	if a := w.sim.Accounts[id]; a != nil {
		return a.Balance, a.ActiveCards()
	}
	return 0, 0
}

func isKind(err error, k fault.Kind) bool { return err != nil && fault.KindOf(err) == k }

func TestAccount(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1500)
	checked := 0
	for _, p := range w.people {
		v, err := w.store.Account(w.ctx, p.id)
		if err != nil {
			t.Fatalf("account %s: %v", p.id, err)
		}
		if v.ID != p.id || v.App != p.app || v.Email != p.email || v.Name != p.name || v.Surname != p.surname ||
			v.DisplayName != p.display || !v.CreatedAt.Equal(p.created) {
			t.Errorf("account %s profile %+v, want %+v", p.id, v.Account, p)
		}
		a := w.sim.Accounts[p.id]
		if a == nil {
			if v.Balance != 0 || v.Transactions != 0 || v.UpdatedAt != nil || v.NextExpiry != nil || len(v.Recent) != 0 || len(v.Cards) != 0 {
				t.Errorf("%s has no loyalty events, got %+v", p.id, v)
			}
			continue
		}
		checked++
		got := fmt.Sprint(v.Balance, v.Earned, v.Redeemed, v.Expired, v.Adjusted, v.Transactions, v.ActiveCards, v.UpdatedAt.UnixMilli())
		want := fmt.Sprint(a.Balance, a.Earned, a.Redeemed, a.Expired, a.Adjusted, a.Transactions, a.ActiveCards(), a.UpdatedAt.UnixMilli())
		if got != want {
			t.Errorf("%s figures %s, want %s", p.id, got, want)
		}
		all := w.wantTxs(p.id)
		if wantRecent := reversed(all)[:min(10, len(all))]; !slices.Equal(txStrings(v.Recent), wantRecent) {
			t.Errorf("%s recent\n got %v\nwant %v", p.id, txStrings(v.Recent), wantRecent)
		}
		for _, tx := range v.Recent {
			if tx.Account != p.id || tx.App != p.app {
				t.Errorf("%s transaction %s says account %s app %s", p.id, tx.ID, tx.Account, tx.App)
			}
		}

		var soonest *time.Time
		var points int64
		for _, l := range a.Lots {
			switch {
			case l.ExpiresAt == nil:
			case soonest == nil || l.ExpiresAt.Before(*soonest):
				soonest, points = l.ExpiresAt, l.Remaining
			case l.ExpiresAt.Equal(*soonest):
				points += l.Remaining
			}
		}
		switch {
		case soonest == nil && v.NextExpiry != nil:
			t.Errorf("%s next expiry %+v, want none", p.id, v.NextExpiry)
		case soonest != nil && (v.NextExpiry == nil || !v.NextExpiry.At.Equal(*soonest) || v.NextExpiry.Points != points):
			t.Errorf("%s next expiry %+v, want %d at %s", p.id, v.NextExpiry, points, soonest)
		}

		var active, redeemed []*loyaltytest.UserCard
		for _, c := range a.Cards {
			if c.Redeemed {
				redeemed = append(redeemed, c)
			} else {
				active = append(active, c)
			}
		}
		sort.SliceStable(redeemed, func(i, j int) bool { return redeemed[i].RedeemAt.After(redeemed[j].RedeemAt) })
		var wantCards []string
		for _, c := range append(active, redeemed[:min(10, len(redeemed))]...) {
			wantCards = append(wantCards, fmt.Sprintf("%s|%s|%s|%s|%d/%d|%v|%v", c.ID, c.Card, w.sim.Cards[c.Card].Name, c.Reward,
				c.Stamps, c.Needed, c.Completed, c.Redeemed))
		}
		var gotCards []string
		for _, c := range v.Cards {
			gotCards = append(gotCards, fmt.Sprintf("%s|%s|%s|%s|%d/%d|%v|%v", c.ID, c.Card, c.Name, c.Reward, c.Stamps, c.Needed,
				c.CompletedAt != nil, c.RedeemedAt != nil))
		}
		if !slices.Equal(gotCards, wantCards) {
			t.Errorf("%s cards\n got %v\nwant %v", p.id, gotCards, wantCards)
		}
	}
	if checked < 25 {
		t.Fatalf("only %d accounts had loyalty events", checked)
	}
	if _, err := w.store.Account(w.ctx, "nobody"); !isKind(err, fault.NotFound) {
		t.Errorf("unknown user: %v, want not found", err)
	}
}

func TestTransactions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1500)
	var busiest string
	for id, a := range w.sim.Accounts {
		if busiest == "" || a.Transactions > w.sim.Accounts[busiest].Transactions {
			busiest = id
		}
	}
	all := reversed(w.wantTxs(busiest))
	if len(all) < 25 {
		t.Fatalf("the busiest account has %d transactions", len(all))
	}
	var got []string
	for page := 1; ; page++ {
		p, err := w.store.Transactions(w.ctx, busiest, page, 7)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != len(all) || p.App != appOf(busiest) {
			t.Fatalf("total %d, app %q; want %d, %q", p.Total, p.App, len(all), appOf(busiest))
		}
		if len(p.Items) == 0 {
			break
		}
		if len(p.Items) > 7 {
			t.Fatalf("page %d has %d items", page, len(p.Items))
		}
		got = append(got, txStrings(p.Items)...)
	}
	if !slices.Equal(got, all) {
		t.Errorf("pages\n got %v\nwant %v", got, all)
	}

	// Defaults; no transactions yet; unknown user; bad pages.
	if p, err := w.store.Transactions(w.ctx, busiest, 0, 0); err != nil || len(p.Items) != rmloyalty.DefaultLimit {
		t.Errorf("defaults: %d items, %v", len(p.Items), err)
	}
	if p, err := w.store.Transactions(w.ctx, "user035", 1, 10); err != nil || p.Total != 0 || len(p.Items) != 0 || p.App != appOf("user035") {
		t.Errorf("a user without loyalty events: %+v, %v", p, err)
	}
	if _, err := w.store.Transactions(w.ctx, "nobody", 1, 10); !isKind(err, fault.NotFound) {
		t.Errorf("unknown user: %v, want not found", err)
	}
	for _, bad := range [][2]int{{-1, 10}, {1, -1}, {1, rmloyalty.MaxLimit + 1}} {
		if _, err := w.store.Transactions(w.ctx, busiest, bad[0], bad[1]); !isKind(err, fault.Invalid) {
			t.Errorf("page %d limit %d: %v, want invalid", bad[0], bad[1], err)
		}
	}

	// One transaction by id, as an idempotent replay needs it.
	first := strings.Split(all[len(all)-1], "|")[0]
	tx, err := w.store.Transaction(w.ctx, busiest, first, [2]int64{})
	if err != nil || txStrings([]rmloyalty.Transaction{tx})[0] != all[len(all)-1] || tx.Account != busiest || tx.App != appOf(busiest) {
		t.Errorf("transaction %s: %+v, %v; want %s", first, tx, err, all[len(all)-1])
	}
	if tx.At.IsZero() || tx.IdempotencyKey == "" {
		t.Errorf("transaction %s lacks its time or key: %+v", first, tx)
	}
	if _, err := w.store.Transaction(w.ctx, "user001", first, [2]int64{}); !isKind(err, fault.NotFound) && busiest != "user001" {
		t.Errorf("another account's transaction: %v, want not found", err)
	}
	if _, err := w.store.Transaction(w.ctx, busiest, "nope", [2]int64{}); !isKind(err, fault.NotFound) {
		t.Errorf("unknown transaction: %v, want not found", err)
	}
	// Within the versions its command wrote (as a write's answer reads it).
	var v int64
	if err := w.pool.QueryRow(w.ctx, `SELECT version FROM loyalty_transactions WHERE id = $1`, first).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if got, err := w.store.Transaction(w.ctx, busiest, first, [2]int64{v, v + 2}); err != nil || got.ID != first {
		t.Errorf("transaction %s within versions %d..%d: %+v, %v", first, v, v+2, got, err)
	}
	if _, err := w.store.Transaction(w.ctx, busiest, first, [2]int64{v + 1, v + 3}); !isKind(err, fault.NotFound) {
		t.Errorf("transaction %s (version %d) within versions %d..%d: %v, want not found", first, v, v+1, v+3, err)
	}

	// A correction's previous balance, and an earn's expiry.
	sawCorrection, sawExpiry := false, false
	for _, id := range slices.Sorted(mapsKeys(w.sim.Accounts)) {
		p, err := w.store.Transactions(w.ctx, id, 1, rmloyalty.MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range p.Items {
			if tx.Kind == "correction" {
				sawCorrection = true
				if tx.PreviousBalance == nil || *tx.PreviousBalance == tx.Balance {
					t.Errorf("correction %+v: want the old balance", tx)
				}
			} else if tx.PreviousBalance != nil {
				t.Errorf("%s transaction with a previous balance: %+v", tx.Kind, tx)
			}
			if tx.Kind == "earn" && tx.ExpiresAt != nil {
				sawExpiry = true
			}
		}
	}
	if !sawCorrection || !sawExpiry {
		t.Errorf("the history should hold a correction (%v) and an expiring earn (%v)", sawCorrection, sawExpiry)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestSearch(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1500)
	type row struct {
		p       person
		balance int64
		cards   int
		updated time.Time
	}
	var rows []row
	for _, p := range w.people {
		b, c := w.balance(p.id)
		r := row{p: p, balance: b, cards: c}
		if a := w.sim.Accounts[p.id]; a != nil {
			r.updated = a.UpdatedAt
		}
		rows = append(rows, r)
	}
	contains := func(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }
	cases := []struct {
		name  string
		q     rmloyalty.SearchQuery
		match func(row) bool
		less  func(x, y row) bool // nil: createdAt desc
	}{
		{name: "app a", q: rmloyalty.SearchQuery{App: "a"}, match: func(r row) bool { return true }},
		{name: "name matches name, surname or display name", q: rmloyalty.SearchQuery{App: "a", Name: "ANNA"},
			match: func(r row) bool {
				return contains(r.p.name, "anna") || contains(r.p.surname, "anna") || contains(r.p.display, "anna")
			}},
		{name: "wildcards are literal", q: rmloyalty.SearchQuery{App: "b", Name: "n_1"},
			match: func(r row) bool { return contains(r.p.name, "n_1") }},
		{name: "percent is literal", q: rmloyalty.SearchQuery{App: "b", Name: "%"},
			match: func(r row) bool { return contains(r.p.name, "%") }},
		{name: "email", q: rmloyalty.SearchQuery{App: "a", Email: "BOB."},
			match: func(r row) bool { return contains(r.p.email, "bob.") }},
		{name: "alias of a live app user", q: rmloyalty.SearchQuery{App: "a", Alias: "anonymous-4-1"},
			match: func(r row) bool { return slices.Contains(r.p.aliases, "anonymous-4-1") }},
		{name: "alias of a deleted app user", q: rmloyalty.SearchQuery{App: "a", Alias: "anonymous-2-1"},
			match: func(r row) bool { return false }},
		{name: "points range", q: rmloyalty.SearchQuery{App: "b", MinPoints: ptr[int64](100), MaxPoints: ptr[int64](2000)},
			match: func(r row) bool { return r.balance >= 100 && r.balance <= 2000 }},
		{name: "at most 0 points (users without events too)", q: rmloyalty.SearchQuery{App: "a", MaxPoints: ptr[int64](0)},
			match: func(r row) bool { return r.balance <= 0 }},
		{name: "with an active card", q: rmloyalty.SearchQuery{App: "a", HasActiveCard: ptr(true)},
			match: func(r row) bool { return r.cards > 0 }},
		{name: "without an active card", q: rmloyalty.SearchQuery{App: "b", HasActiveCard: ptr(false)},
			match: func(r row) bool { return r.cards == 0 }},
		{name: "by balance desc", q: rmloyalty.SearchQuery{App: "a", Sort: []rmloyalty.SortKey{{Field: "balance", Desc: true}}},
			match: func(r row) bool { return true },
			less:  func(x, y row) bool { return x.balance > y.balance }},
		{name: "by name, then email desc", q: rmloyalty.SearchQuery{App: "b", Sort: []rmloyalty.SortKey{{Field: "name"}, {Field: "email", Desc: true}}},
			match: func(r row) bool { return true },
			less: func(x, y row) bool {
				if a, b := strings.ToLower(x.p.name), strings.ToLower(y.p.name); a != b {
					return a < b
				}
				if a, b := strings.ToLower(x.p.surname), strings.ToLower(y.p.surname); a != b {
					return a < b
				}
				return strings.ToLower(x.p.email) > strings.ToLower(y.p.email)
			}},
		{name: "by updatedAt, never first", q: rmloyalty.SearchQuery{App: "a", Sort: []rmloyalty.SortKey{{Field: "updatedAt"}}},
			match: func(r row) bool { return true },
			less:  func(x, y row) bool { return x.updated.Before(y.updated) }},
		{name: "by createdAt asc", q: rmloyalty.SearchQuery{App: "b", Sort: []rmloyalty.SortKey{{Field: "createdAt"}}},
			match: func(r row) bool { return true },
			less:  func(x, y row) bool { return x.p.created.Before(y.p.created) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			var matched []row
			for _, r := range rows {
				if r.p.app == c.q.App && c.match(r) {
					matched = append(matched, r)
				}
			}
			less := c.less
			if less == nil {
				less = func(x, y row) bool { return x.p.created.After(y.p.created) }
			}
			sort.SliceStable(matched, func(i, j int) bool {
				if less(matched[i], matched[j]) {
					return true
				}
				if less(matched[j], matched[i]) {
					return false
				}
				return matched[i].p.id < matched[j].p.id
			})
			for _, r := range matched {
				want = append(want, fmt.Sprintf("%s:%d:%d", r.p.id, r.balance, r.cards))
			}
			var got []string
			for page := 1; ; page++ {
				q := c.q
				q.Page, q.Limit = page, 4
				res, err := w.store.Search(w.ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if res.Total != len(want) {
					t.Fatalf("total %d, want %d", res.Total, len(want))
				}
				if len(res.Items) == 0 {
					break
				}
				for _, a := range res.Items {
					if a.App != c.q.App {
						t.Errorf("%s of app %s in a search of %s", a.ID, a.App, c.q.App)
					}
					got = append(got, fmt.Sprintf("%s:%d:%d", a.ID, a.Balance, a.ActiveCards))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("\n got %v\nwant %v", got, want)
			}
		})
	}
	// The search shows the same figures as the account view.
	res, err := w.store.Search(w.ctx, rmloyalty.SearchQuery{App: "a", Limit: rmloyalty.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Items {
		v, err := w.store.Account(w.ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if show(a) != show(v.Account) {
			t.Errorf("search and account differ:\n%s\n%s", show(a), show(v.Account))
		}
	}

	for name, q := range map[string]rmloyalty.SearchQuery{
		"no app":          {},
		"unknown sort":    {App: "a", Sort: []rmloyalty.SortKey{{Field: "balance; DROP TABLE loyalty_accounts"}}},
		"min above max":   {App: "a", MinPoints: ptr[int64](10), MaxPoints: ptr[int64](5)},
		"limit too large": {App: "a", Limit: rmloyalty.MaxLimit + 1},
		"negative page":   {App: "a", Page: -2},
		"name too long":   {App: "a", Name: strings.Repeat("n", rmloyalty.MaxFilter+1)},
		"email too long":  {App: "a", Email: strings.Repeat("e", rmloyalty.MaxFilter+1)},
		"alias too long":  {App: "a", Alias: strings.Repeat("a", rmloyalty.MaxFilter+1)},
	} {
		if _, err := w.store.Search(w.ctx, q); !isKind(err, fault.Invalid) {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

func show(a rmloyalty.Account) string {
	next := "none"
	if a.NextExpiry != nil {
		next = fmt.Sprint(a.NextExpiry.Points, "@", a.NextExpiry.At.UnixMilli())
	}
	a.NextExpiry = nil
	return fmt.Sprintf("%+v next %s", a, next)
}

func TestDueAccounts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 600)
	now := w.sim.Now.Add(100 * time.Millisecond)
	type due struct {
		id  string
		min time.Time
	}
	var dues []due
	for id, a := range w.sim.Accounts {
		var m *time.Time
		for _, l := range a.Lots {
			if l.ExpiresAt != nil && !l.ExpiresAt.After(now) && (m == nil || l.ExpiresAt.Before(*m)) {
				m = l.ExpiresAt
			}
		}
		if m != nil {
			dues = append(dues, due{id, *m})
		}
	}
	if len(dues) < 3 {
		t.Fatalf("only %d accounts are due; the history should leave more", len(dues))
	}
	sort.Slice(dues, func(i, j int) bool { return dues[i].min.Before(dues[j].min) })
	got, err := w.store.DueAccounts(w.ctx, now, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range dues {
		ids = append(ids, d.id)
	}
	// Accounts due at the same instant may come in either order.
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(ids))) {
		t.Fatalf("due %v, want %v", got, ids)
	}
	for i := 1; i < len(got); i++ {
		a, b := w.sim.Accounts[got[i-1]], w.sim.Accounts[got[i]]
		if minDue(a, now).After(minDue(b, now)) {
			t.Errorf("%s (due %s) before %s (due %s)", got[i-1], minDue(a, now), got[i], minDue(b, now))
		}
	}
	if two, err := w.store.DueAccounts(w.ctx, now, 2); err != nil || !slices.Equal(two, got[:2]) {
		t.Errorf("limit 2: %v, %v; want %v", two, err, got[:2])
	}
	if got, err := w.store.DueAccounts(w.ctx, t0.Add(-time.Hour), 10); err != nil || len(got) != 0 {
		t.Errorf("nothing is due before the history: %v, %v", got, err)
	}
}

func minDue(a *loyaltytest.Account, now time.Time) time.Time {
	var m time.Time
	for _, l := range a.Lots {
		if l.ExpiresAt != nil && !l.ExpiresAt.After(now) && (m.IsZero() || l.ExpiresAt.Before(m)) {
			m = *l.ExpiresAt
		}
	}
	return m
}

func TestCards(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 1500)
	for _, app := range []string{"a", "b", "none"} {
		var want []string
		for _, c := range w.sim.Cards {
			if c.App == app && !c.Retired {
				want = append(want, fmt.Sprintf("%s|%s|%s|%d|%s", c.Name, c.ID, c.Description, c.Needed, c.Reward))
			}
		}
		sort.Strings(want)
		cards, err := w.store.Cards(w.ctx, app)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cards {
			got = append(got, fmt.Sprintf("%s|%s|%s|%d|%s", c.Name, c.ID, c.Description, c.StampsNeeded, c.Reward))
			if c.App != app || c.Retired || c.CreatedAt.IsZero() || c.UpdatedAt.Before(c.CreatedAt) {
				t.Errorf("card %+v", c)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("cards of %s\n got %v\nwant %v", app, got, want)
		}
	}
	for id, c := range w.sim.Cards {
		got, err := w.store.Card(w.ctx, id)
		if err != nil || got.Name != c.Name || got.Retired != c.Retired || got.StampsNeeded != c.Needed || got.App != c.App {
			t.Errorf("card %s: %+v, %v; want %+v", id, got, err, c)
		}
	}
	if _, err := w.store.Card(w.ctx, "nope"); !isKind(err, fault.NotFound) {
		t.Errorf("unknown card: %v, want not found", err)
	}
	retired := 0
	for _, c := range w.sim.Cards {
		if c.Retired {
			retired++
		}
	}
	if retired == 0 || retired == len(w.sim.Cards) {
		t.Errorf("%d of %d cards retired; the history should retire some", retired, len(w.sim.Cards))
	}
}

// more runs f on the world's simulation and projects what it recorded.
func (w *world) more(t *testing.T, f func(s *loyaltytest.Sim)) {
	t.Helper()
	f(w.sim)
	all := w.sim.Recorded()
	applyTx(t, w.ctx, w.pool, projloyalty.Projector{}, all[len(w.log):])
	w.log = all
}

// Lots that expire at the same instant add up; spent and expired lots
// leave the next expiry.
func TestNextExpiry(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 0)
	soon, later := t0.Add(time.Hour), t0.Add(2*time.Hour)
	w.more(t, func(s *loyaltytest.Sim) {
		s.Earn("user039", "b", 30, &later)
		s.Earn("user039", "b", 10, &soon)
		s.Earn("user039", "b", 15, &soon)
		s.Earn("user039", "b", 100, nil)
	})
	next := func() string {
		t.Helper()
		v, err := w.store.Account(w.ctx, "user039")
		if err != nil {
			t.Fatal(err)
		}
		if v.NextExpiry == nil {
			return "none"
		}
		return fmt.Sprintf("%d at +%s", v.NextExpiry.Points, v.NextExpiry.At.Sub(t0))
	}
	if got := next(); got != "25 at +1h0m0s" {
		t.Errorf("next expiry %s, want 25 at +1h", got)
	}
	w.more(t, func(s *loyaltytest.Sim) { s.Redeem("user039", 12) }) // 10 of the first lot, 2 of the second
	if got := next(); got != "13 at +1h0m0s" {
		t.Errorf("after redeeming 12: next expiry %s, want 13 at +1h", got)
	}
	w.more(t, func(s *loyaltytest.Sim) { s.Now = soon; s.ExpireDue("user039") })
	if got := next(); got != "30 at +2h0m0s" {
		t.Errorf("after the expiry: next expiry %s, want 30 at +2h", got)
	}
	w.more(t, func(s *loyaltytest.Sim) { s.Redeem("user039", 40) })
	if got := next(); got != "none" {
		t.Errorf("after spending the expiring lots: next expiry %s, want none", got)
	}
	v, _ := w.store.Account(w.ctx, "user039")
	if v.Balance != 90 || v.Expired != 13 || v.Redeemed != 52 {
		t.Errorf("figures %+v, want balance 90, expired 13, redeemed 52", v.Account)
	}
}

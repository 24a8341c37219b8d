package main

import (
	"net/http"
	"slices"
	"testing"
)

// TestLoyaltySearch: each filter and sort of POST /api/loyalty/user/search,
// pagination, and the app's users only.
func TestLoyaltySearch(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app, other := ts.createApp("Shop"), ts.createApp("Other")
	appTok := ts.appToken(app)
	ann := ts.newMember(appTok, "ann@example.com", "Ann", "Archer")
	bob := ts.newMember(appTok, "bob@example.org", "Bob", "Baker")
	cat := ts.newMember(appTok, "cat@example.com", "Cat", "Cooper")
	ts.newMember(ts.appToken(other), "dan@example.com", "Dan", "Archer")

	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 300, "reason": "test"})
	ts.mustPoints(ts.admin, bob.ID, "earn", map[string]any{"amount": 100, "reason": "test"})
	card := ts.defineCard(ts.admin, map[string]any{"app": app.ID, "name": "Visits", "stampsNeeded": 10, "reward": "A gift"})
	ts.mustJSON(ts.post(userPath(bob.ID, "/stamps"), ts.admin, map[string]any{"card": card.ID, "stamps": 1}), http.StatusCreated, nil)

	search := func(body map[string]any) loyaltyPageView {
		t.Helper()
		if _, ok := body["app"]; !ok {
			body["app"] = app.ID
		}
		return ts.loyaltySearch(ts.admin, body)
	}
	for _, c := range []struct {
		name string
		body map[string]any
		want []string
	}{
		{"everyone, newest registration first", map[string]any{}, []string{cat.ID, bob.ID, ann.ID}},
		{"by the app's number", map[string]any{"app": ann.AppNumber}, []string{cat.ID, bob.ID, ann.ID}},
		{"appId", map[string]any{"app": nil, "appId": app.ID}, []string{cat.ID, bob.ID, ann.ID}},
		{"name: surname, any case", map[string]any{"name": "ARCH"}, []string{ann.ID}},
		{"name: first name", map[string]any{"name": "bo"}, []string{bob.ID}},
		{"email", map[string]any{"email": "EXAMPLE.COM"}, []string{cat.ID, ann.ID}},
		{"alias", map[string]any{"alias": bob.Alias}, []string{bob.ID}},
		{"alias of nobody", map[string]any{"alias": "anonymous-nosuchalias"}, []string{}},
		{"points min", map[string]any{"points": map[string]any{"min": 100}}, []string{bob.ID, ann.ID}},
		{"points max", map[string]any{"points": map[string]any{"max": 100}}, []string{cat.ID, bob.ID}},
		{"points range", map[string]any{"points": map[string]any{"min": 101, "max": 300}}, []string{ann.ID}},
		{"active stamp card", map[string]any{"hasActiveStampCard": true}, []string{bob.ID}},
		{"no active stamp card", map[string]any{"hasActiveStampCard": false}, []string{cat.ID, ann.ID}},
		{"filters combine", map[string]any{"email": "example.com", "points": map[string]any{"min": 1}}, []string{ann.ID}},
		{"balance desc", map[string]any{"sort": []string{"balance desc"}}, []string{ann.ID, bob.ID, cat.ID}},
		{"balance asc", map[string]any{"sort": []string{"balance asc"}}, []string{cat.ID, bob.ID, ann.ID}},
		{"balance, as one string", map[string]any{"sort": "balance DESC"}, []string{ann.ID, bob.ID, cat.ID}},
		{"name asc (default direction)", map[string]any{"sort": []string{"name"}}, []string{ann.ID, bob.ID, cat.ID}},
		{"name desc", map[string]any{"sort": []string{"name desc"}}, []string{cat.ID, bob.ID, ann.ID}},
		{"email desc", map[string]any{"sort": []string{"email desc"}}, []string{cat.ID, bob.ID, ann.ID}},
		{"createdAt asc", map[string]any{"sort": []string{"createdAt asc"}}, []string{ann.ID, bob.ID, cat.ID}},
		{"updatedAt desc", map[string]any{"points": map[string]any{"min": 1}, "sort": []string{"updatedAt desc"}}, []string{bob.ID, ann.ID}},
	} {
		p := search(c.body)
		if got := p.ids(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if p.Pagination.TotalItems != len(c.want) {
			t.Errorf("%s: totalItems %d, want %d", c.name, p.Pagination.TotalItems, len(c.want))
		}
	}

	// Two keys: balance, then name.
	ts.mustPoints(ts.admin, cat.ID, "earn", map[string]any{"amount": 100, "reason": "test"})
	if got := search(map[string]any{"sort": []string{"balance desc", "name desc"}}).ids(); !slices.Equal(got, []string{ann.ID, cat.ID, bob.ID}) {
		t.Errorf("balance desc, name desc: %v", got)
	}
	if got := search(map[string]any{"sort": "balance desc,name asc"}).ids(); !slices.Equal(got, []string{ann.ID, bob.ID, cat.ID}) {
		t.Errorf("balance desc, name asc: %v", got)
	}

	// The items carry the figures.
	p := search(map[string]any{"name": "ann"})
	if len(p.Items) != 1 || p.Items[0].Balance != 300 || p.Items[0].Earned != 300 || p.Items[0].TransactionCount != 1 ||
		p.Items[0].AppID != ann.AppNumber || p.Items[0].Email != ann.Email || p.Items[0].Surname != "Archer" {
		t.Errorf("an item: %+v", p.Items)
	}
	if b := search(map[string]any{"name": "bob"}); len(b.Items) != 1 || b.Items[0].ActiveStampCards != 1 {
		t.Errorf("bob's active cards: %+v", b.Items)
	}

	// Pagination.
	p = search(map[string]any{"sort": []string{"name"}, "pagination": map[string]any{"page": 2, "limit": 2}})
	if !slices.Equal(p.ids(), []string{cat.ID}) || p.Pagination.TotalItems != 3 || p.Pagination.TotalPages != 2 ||
		p.Pagination.Page != 2 || p.Pagination.Limit != 2 || p.Pagination.Offset != 2 {
		t.Errorf("page 2 of 2: %v %+v", p.ids(), p.Pagination)
	}
	if p := search(map[string]any{"pagination": map[string]any{"page": 3, "limit": 2}}); len(p.Items) != 0 || p.Pagination.TotalItems != 3 {
		t.Errorf("past the end: %+v", p)
	}
}

package main

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
)

// TestLoyaltyStampCards: definitions (define, list, read, change, retire),
// stamps with overflow into new cards, completion and redemption by the
// CMS and by the user, replays, and retired definitions.
func TestLoyaltyStampCards(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app, other := ts.createApp("Cafe"), ts.createApp("Other")
	appTok := ts.appToken(app)
	ann := ts.newMember(appTok, "ann@example.com", "Ann", "Archer")

	// Define, by the app's number and by its id.
	coffee := ts.defineCard(ts.admin, map[string]any{"app": ann.AppNumber, "name": "Coffee", "description": "Every fourth coffee is on us",
		"stampsNeeded": 3, "reward": "A free coffee"})
	if coffee.AppID != ann.AppNumber || coffee.Name != "Coffee" || coffee.StampsNeeded != 3 || coffee.Reward != "A free coffee" ||
		coffee.Retired || coffee.CreatedAt == 0 || coffee.UpdatedAt == 0 || coffee.Description != "Every fourth coffee is on us" {
		t.Fatalf("defined: %+v", coffee)
	}
	bagel := ts.defineCard(ts.admin, map[string]any{"app": app.ID, "name": "Bagel", "stampsNeeded": 5, "reward": "A bagel"})
	ts.defineCard(ts.admin, map[string]any{"app": other.ID, "name": "Elsewhere", "stampsNeeded": 5, "reward": "x"})

	// Listed by name: for the CMS by app, for the app's own tokens without.
	names := func(r response) []string {
		t.Helper()
		var cs []stampCardView
		ts.mustJSON(r, http.StatusOK, &cs)
		out := []string{}
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	want := []string{"Bagel", "Coffee"}
	if got := names(ts.get(stampCardPath+"?app="+app.ID, ts.admin)); !slices.Equal(got, want) {
		t.Errorf("admin lists %v", got)
	}
	if got := names(ts.get(stampCardPath+"/?app="+strconv.Itoa(ann.AppNumber), ts.admin)); !slices.Equal(got, want) {
		t.Errorf("admin lists by number %v", got)
	}
	if got := names(ts.get(stampCardPath, appTok)); !slices.Equal(got, want) {
		t.Errorf("the app token lists %v", got)
	}
	if got := names(ts.get(stampCardPath, ann.Token)); !slices.Equal(got, want) {
		t.Errorf("the identified user lists %v", got)
	}
	expectHaloError(t, ts.get(stampCardPath+"?app="+other.ID, appTok), http.StatusForbidden)
	var got stampCardView
	ts.mustJSON(ts.get(stampCardPath+"/"+coffee.ID, ts.admin), http.StatusOK, &got)
	if got != coffee {
		t.Errorf("GET %+v, want %+v", got, coffee)
	}
	ts.mustJSON(ts.get(stampCardPath+"/"+coffee.ID, appTok), http.StatusOK, &got)
	expectHaloError(t, ts.get(stampCardPath+"/nosuchcard", ts.admin), http.StatusNotFound)

	// Stamps: 2 on a new card, then 5 more fill it, fill a second and
	// start a third.
	var st stampsView
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": coffee.ID, "stamps": 2}), http.StatusCreated, &st)
	if st.User != ann.ID || len(st.StampCards) != 1 || len(st.Completed) != 0 {
		t.Fatalf("2 stamps: %+v", st)
	}
	first := st.StampCards[0]
	if first.CardID != coffee.ID || first.Stamps != 2 || first.Needed != 3 || first.Completed || first.Name != "Coffee" ||
		first.Reward != "A free coffee" || first.CompletedAt != nil || first.RedeemedAt != nil {
		t.Fatalf("the first card: %+v", first)
	}
	body := map[string]any{"card": coffee.ID, "stamps": 5, "reason": "visit", "idempotencyKey": "visit-7"}
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, body), http.StatusCreated, &st)
	if len(st.StampCards) != 3 || st.StampCards[0].ID != first.ID || !slices.Equal(st.Completed, []string{first.ID, st.StampCards[1].ID}) {
		t.Fatalf("5 stamps: %+v", st)
	}
	for i, w := range []struct {
		stamps    int
		completed bool
	}{{3, true}, {3, true}, {1, false}} {
		c := st.StampCards[i]
		if c.Stamps != w.stamps || c.Completed != w.completed || c.Needed != 3 || (c.CompletedAt != nil) != w.completed {
			t.Errorf("card %d after the overflow: %+v", i, c)
		}
	}
	second, third := st.StampCards[1], st.StampCards[2]
	// The same stamps again: a replay.
	r := ts.post(userPath(ann.ID, "/stamps"), ts.admin, body)
	if expectStatus(t, r, http.StatusOK) && r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("stamps replay: no Idempotent-Replayed header")
	}
	u := ts.loyaltyUser(ts.admin, ann.ID)
	if u.ActiveStampCards != 3 || len(u.StampCards) != 3 || u.Balance != 0 {
		t.Fatalf("user with 3 cards: %+v", u)
	}

	// Redeem: the CMS, then the user themself; twice is a 409, and so is
	// a card not completed.
	var red cardRedeemedView
	ts.mustJSON(ts.post(userPath(ann.ID, "/stampcards/"+first.ID+"/redeem"), ts.admin, nil), http.StatusCreated, &red)
	if red.User != ann.ID || red.StampCard.ID != first.ID || !red.StampCard.Redeemed || red.StampCard.RedeemedAt == nil {
		t.Errorf("redeemed by the CMS: %+v", red)
	}
	expectHaloError(t, ts.post(userPath(ann.ID, "/stampcards/"+first.ID+"/redeem"), ts.admin, nil), http.StatusConflict)
	expectHaloError(t, ts.post(userPath(ann.ID, "/stampcards/"+third.ID+"/redeem"), ts.admin, nil), http.StatusConflict)
	r = ts.post(userPath("self", "/stampcards/"+second.ID+"/redeem"), ann.Token, map[string]any{"idempotencyKey": "redeem-2"})
	ts.mustJSON(r, http.StatusCreated, &red)
	if red.StampCard.ID != second.ID || !red.StampCard.Redeemed {
		t.Errorf("redeemed by the user: %+v", red)
	}
	r = ts.post(userPath("self", "/stampcards/"+second.ID+"/redeem"), ann.Token, map[string]any{"idempotencyKey": "redeem-2"})
	if expectStatus(t, r, http.StatusOK) && r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("card redeem replay: no Idempotent-Replayed header")
	}
	if u := ts.loyaltyUser(ts.admin, ann.ID); u.ActiveStampCards != 1 {
		t.Errorf("after two redemptions: %d active cards, want 1", u.ActiveStampCards)
	}

	// Change: cards already started keep what they need; new ones take
	// the new definition.
	var changed stampCardView
	edit := map[string]any{"id": coffee.ID, "appId": coffee.AppID, "name": "Coffee card", "description": "", "stampsNeeded": 4,
		"reward": "A large coffee", "retired": false, "createdAt": coffee.CreatedAt, "updatedAt": coffee.UpdatedAt}
	ts.mustJSON(ts.put(stampCardPath+"/"+coffee.ID, ts.admin, edit), http.StatusOK, &changed)
	if changed.Name != "Coffee card" || changed.StampsNeeded != 4 || changed.Reward != "A large coffee" || changed.CreatedAt != coffee.CreatedAt {
		t.Errorf("changed: %+v", changed)
	}
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": coffee.ID, "stamps": 3}), http.StatusCreated, &st)
	if len(st.StampCards) != 2 || st.StampCards[0].ID != third.ID || st.StampCards[0].Needed != 3 || !st.StampCards[0].Completed ||
		st.StampCards[0].Reward != "A free coffee" || st.StampCards[1].Needed != 4 || st.StampCards[1].Stamps != 1 ||
		st.StampCards[1].Reward != "A large coffee" || !slices.Equal(st.Completed, []string{third.ID}) {
		t.Errorf("stamps after the change: %+v", st)
	}

	if u := ts.loyaltyUser(ts.admin, ann.ID); u.ActiveStampCards != 2 {
		t.Errorf("before retiring: %d active cards, want 2 (one completed, one open)", u.ActiveStampCards)
	}

	// Retire: no longer listed nor stamped; its completed card can still
	// be redeemed, its open card is no longer active.
	var retired stampCardView
	ts.mustJSON(ts.do(request{method: http.MethodDelete, path: stampCardPath + "/" + coffee.ID, token: ts.admin}), http.StatusOK, &retired)
	if !retired.Retired || retired.ID != coffee.ID {
		t.Errorf("retired: %+v", retired)
	}
	if got := names(ts.get(stampCardPath+"?app="+app.ID, ts.admin)); !slices.Equal(got, []string{"Bagel"}) {
		t.Errorf("after retiring: %v", got)
	}
	ts.mustJSON(ts.get(stampCardPath+"/"+coffee.ID, ts.admin), http.StatusOK, &got)
	if !got.Retired {
		t.Errorf("GET a retired card: %+v", got)
	}
	if u := ts.loyaltyUser(ts.admin, ann.ID); u.ActiveStampCards != 1 {
		t.Errorf("after retiring: %d active cards, want 1 (the completed one)", u.ActiveStampCards)
	}
	n := ts.loyaltyEvents()
	expectHaloError(t, ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": coffee.ID, "stamps": 1}), http.StatusConflict)
	if m := ts.loyaltyEvents(); m != n {
		t.Errorf("stamps on a retired card appended %d events", m-n)
	}
	ts.mustJSON(ts.post(userPath(ann.ID, "/stampcards/"+third.ID+"/redeem"), ts.admin, nil), http.StatusCreated, &red)
	// Another definition still takes stamps.
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps/"), ts.admin, map[string]any{"card": bagel.ID, "stamps": 1}), http.StatusCreated, &st)
	if len(st.StampCards) != 1 || st.StampCards[0].CardID != bagel.ID || st.StampCards[0].Needed != 5 {
		t.Errorf("bagel stamps: %+v", st)
	}
	// Cards of another app's definition: refused, nothing recorded.
	var elsewhere []stampCardView
	ts.mustJSON(ts.get(stampCardPath+"?app="+other.ID, ts.admin), http.StatusOK, &elsewhere)
	n = ts.loyaltyEvents()
	r = ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": elsewhere[0].ID, "stamps": 1})
	if r.Status < 400 || r.Status >= 500 {
		t.Errorf("stamps of another app's card: %s", r)
	}
	if m := ts.loyaltyEvents(); m != n {
		t.Errorf("stamps of another app's card appended %d events", m-n)
	}
	u = ts.loyaltyUser(ts.admin, ann.ID)
	if u.ActiveStampCards != 1 {
		t.Errorf("active cards at the end: %d, want 1, the bagel card (%+v)", u.ActiveStampCards, u.StampCards)
	}
}

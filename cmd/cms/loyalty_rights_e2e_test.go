package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestLoyaltyRights: who may call each loyalty endpoint. 401 without a
// token; app tokens write nothing and read no account; CMS users need
// read, write, update, delete or manage on the account's app; identified
// users read and redeem their own account only. Refused calls change
// nothing.
func TestLoyaltyRights(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	appA, appB := ts.createApp("A"), ts.createApp("B")
	tokA := ts.appToken(appA)
	ann := ts.newMember(tokA, "ann@example.com", "Ann", "Archer")
	zed := ts.newMember(tokA, "zed@example.com", "Zed", "Zulu")
	bob := ts.newMember(ts.appToken(appB), "bob@example.com", "Bob", "Baker")

	on := func(app string, perms ...string) grantTo { return grantTo{app: app, perms: perms} }
	_, reader := ts.userWith("reader", on(appA.ID, "read"))
	_, writer := ts.userWith("writer", on(appA.ID, "write"))
	_, updater := ts.userWith("updater", on(appA.ID, "update"))
	_, deleter := ts.userWith("deleter", on(appA.ID, "delete"))
	_, manager := ts.userWith("manager", on(appA.ID, "manage"))
	_, nobody := ts.userWith("nobody")
	_, writerB := ts.userWith("writerb", on(appB.ID, "read", "write", "update", "delete", "manage"))

	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 1000, "reason": "test"})
	ts.mustPoints(ts.admin, zed.ID, "earn", map[string]any{"amount": 1000, "reason": "test"})
	card := ts.defineCard(ts.admin, map[string]any{"app": appA.ID, "name": "Card", "stampsNeeded": 1, "reward": "r"})
	var st stampsView
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": card.ID, "stamps": 3}), http.StatusCreated, &st)
	userCards := []string{st.StampCards[0].ID, st.StampCards[1].ID, st.StampCards[2].ID}

	type call struct {
		name         string
		method, path string
		body         any
	}
	var (
		getAnn     = call{"get user", "GET", userPath(ann.ID, ""), nil}
		getSelf    = call{"self", "GET", loyaltySelfPath, nil}
		txAnn      = call{"transactions", "GET", userPath(ann.ID, "/transactions"), nil}
		txSelf     = call{"self transactions", "GET", userPath("self", "/transactions"), nil}
		search     = call{"search", "POST", loyaltySearchPath, map[string]any{"app": appA.ID}}
		earnAnn    = call{"earn", "POST", userPath(ann.ID, "/earn"), map[string]any{"amount": 1, "reason": "test"}}
		redeemAnn  = call{"redeem", "POST", userPath(ann.ID, "/redeem"), map[string]any{"amount": 1, "reason": "test"}}
		redeemSelf = call{"redeem self", "POST", userPath("self", "/redeem"), map[string]any{"amount": 1, "reason": "test"}}
		adjustAnn  = call{"adjust", "POST", userPath(ann.ID, "/adjust"), map[string]any{"amount": 1, "reason": "test"}}
		stampsAnn  = call{"stamps", "POST", userPath(ann.ID, "/stamps"), map[string]any{"card": card.ID, "stamps": 1}}
		rebalance  = call{"rebalance", "POST", loyaltyRebalancePath, map[string]any{"user": ann.ID}}
		listCards  = call{"list cards", "GET", stampCardPath + "?app=" + appA.ID, nil}
		getCard    = call{"get card", "GET", stampCardPath + "/" + card.ID, nil}
		defineCard = call{"define card", "POST", stampCardPath, map[string]any{"app": appA.ID, "name": "New", "stampsNeeded": 2, "reward": "r"}}
		changeCard = call{"change card", "PUT", stampCardPath + "/" + card.ID, map[string]any{"name": "Card", "stampsNeeded": 1, "reward": "r2"}}
		retireCard = call{"retire card", "DELETE", stampCardPath + "/" + card.ID, nil}
		audit      = call{"audit", "GET", loyaltyAuditURL(ann.ID, 0, 0), nil}
		redeemCard = func(i int) call {
			return call{"redeem card", "POST", userPath(ann.ID, "/stampcards/"+userCards[i]+"/redeem"), nil}
		}
		redeemCardS = func(i int) call {
			return call{"redeem own card", "POST", userPath("self", "/stampcards/"+userCards[i]+"/redeem"), nil}
		}
	)
	every := []call{getAnn, getSelf, txAnn, txSelf, search, earnAnn, redeemAnn, redeemSelf, adjustAnn, stampsAnn, rebalance,
		listCards, getCard, defineCard, changeCard, retireCard, audit, redeemCard(0)}

	// Without a token: 401 everywhere, in the HALO error shape, with
	// WWW-Authenticate.
	for _, c := range every {
		r := ts.do(request{method: c.method, path: c.path, body: c.body})
		expectHaloError(t, r, http.StatusUnauthorized)
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s without a token: no WWW-Authenticate", c.name)
		}
	}

	check := func(who, token string, c call, want int) {
		t.Helper()
		r := ts.do(request{method: c.method, path: c.path, token: token, body: c.body})
		if r.Status != want {
			t.Errorf("%s, %s: %s, want %d", who, c.name, r, want)
		} else if want >= 400 {
			expectHaloError(t, r, want)
		}
	}
	events := ts.loyaltyEvents()
	refusals := []struct {
		who   string
		token string
		calls []call
		want  int
	}{
		{"app token", tokA, []call{getAnn, getSelf, txAnn, txSelf, search, earnAnn, redeemAnn, redeemSelf, adjustAnn, stampsAnn,
			rebalance, defineCard, changeCard, retireCard, audit, redeemCard(0)}, http.StatusForbidden},
		{"identified user", ann.Token, []call{{"get another user", "GET", userPath(zed.ID, ""), nil},
			{"another's transactions", "GET", userPath(zed.ID, "/transactions"), nil}, search, earnAnn, adjustAnn, stampsAnn, rebalance,
			defineCard, changeCard, retireCard, audit, {"redeem another's", "POST", userPath(zed.ID, "/redeem"), map[string]any{"amount": 1, "reason": "test"}},
			{"redeem another app's user", "POST", userPath(bob.ID, "/redeem"), map[string]any{"amount": 1, "reason": "test"}}}, http.StatusForbidden},
		{"CMS user without rights", nobody, []call{getAnn, txAnn, search, earnAnn, redeemAnn, adjustAnn, stampsAnn, rebalance,
			listCards, getCard, defineCard, changeCard, retireCard, audit, redeemCard(0)}, http.StatusForbidden},
		{"CMS user on another app", writerB, []call{getAnn, txAnn, search, earnAnn, redeemAnn, adjustAnn, stampsAnn, rebalance,
			listCards, getCard, defineCard, changeCard, retireCard, audit, redeemCard(0)}, http.StatusForbidden},
		{"CMS users have no self", ts.admin, []call{getSelf, txSelf, redeemSelf}, http.StatusForbidden},
		{"read only", reader, []call{earnAnn, redeemAnn, adjustAnn, stampsAnn, rebalance, defineCard, changeCard, retireCard,
			audit, redeemCard(0)}, http.StatusForbidden},
		{"write", writer, []call{adjustAnn, rebalance, changeCard, retireCard, audit}, http.StatusForbidden},
		{"update", updater, []call{earnAnn, redeemAnn, stampsAnn, defineCard, retireCard, redeemCard(0)}, http.StatusForbidden},
		{"delete", deleter, []call{earnAnn, adjustAnn, changeCard, defineCard}, http.StatusForbidden},
	}
	for _, row := range refusals {
		for _, c := range row.calls {
			check(row.who, row.token, c, row.want)
		}
	}

	// A caller refused whatever the request holds learns nothing from it:
	// not whether an id exists (403, not 404), not what is wrong with a
	// body or a query (403, not 400).
	const unknown = "identified-nosuchuser"
	malformed := `{"amount": `
	var (
		unknownIDs = []call{
			{"get unknown user", "GET", userPath(unknown, ""), nil},
			{"unknown's transactions", "GET", userPath(unknown, "/transactions"), nil},
			{"earn unknown", "POST", userPath(unknown, "/earn"), map[string]any{"amount": 1, "reason": "test"}},
			{"redeem unknown", "POST", userPath(unknown, "/redeem"), map[string]any{"amount": 1, "reason": "test"}},
			{"adjust unknown", "POST", userPath(unknown, "/adjust"), map[string]any{"amount": 1, "reason": "test"}},
			{"stamps unknown", "POST", userPath(unknown, "/stamps"), map[string]any{"card": card.ID, "stamps": 1}},
			{"redeem unknown's card", "POST", userPath(unknown, "/stampcards/x/redeem"), nil},
			{"rebalance unknown", "POST", loyaltyRebalancePath, map[string]any{"user": unknown}},
			{"change unknown card", "PUT", stampCardPath + "/nosuchcard", map[string]any{"name": "Card", "stampsNeeded": 1, "reward": "r2"}},
			{"retire unknown card", "DELETE", stampCardPath + "/nosuchcard", nil},
			{"audit unknown", "GET", loyaltyAuditURL(unknown, 0, 0), nil},
		}
		badInput = []call{
			{"earn malformed", "POST", userPath(ann.ID, "/earn"), malformed},
			{"earn unknown, malformed", "POST", userPath(unknown, "/earn"), malformed},
			{"redeem malformed", "POST", userPath(ann.ID, "/redeem"), malformed},
			{"adjust amount 0", "POST", userPath(ann.ID, "/adjust"), map[string]any{"amount": 0, "reason": "test"}},
			{"stamps malformed", "POST", userPath(ann.ID, "/stamps"), malformed},
			{"redeem card malformed", "POST", userPath(ann.ID, "/stampcards/"+userCards[0]+"/redeem"), malformed},
			{"rebalance malformed", "POST", loyaltyRebalancePath, malformed},
			{"rebalance without user", "POST", loyaltyRebalancePath, map[string]any{}},
			{"search malformed", "POST", loyaltySearchPath, malformed},
			{"search without app", "POST", loyaltySearchPath, map[string]any{}},
			{"define card malformed", "POST", stampCardPath, malformed},
			{"define card without app", "POST", stampCardPath, map[string]any{"name": "New", "stampsNeeded": 2, "reward": "r"}},
			{"change card malformed", "PUT", stampCardPath + "/" + card.ID, malformed},
			{"transactions limit abc", "GET", userPath(ann.ID, "/transactions?limit=abc"), nil},
			{"audit bad from", "GET", loyaltyAuditPath + "?user=" + ann.ID + "&from=noon", nil},
			{"audit without user", "GET", loyaltyAuditPath, nil},
		}
	)
	for _, who := range []struct{ name, token string }{{"app token", tokA}, {"CMS user without rights", nobody}} {
		for _, c := range append(slices.Clone(unknownIDs), badInput...) {
			check(who.name, who.token, c, http.StatusForbidden)
		}
	}
	// Rights that do not cover a command count as none for it.
	for _, c := range []call{unknownIDs[2], unknownIDs[4], badInput[0], badInput[3]} { // earn, adjust
		check("read only", reader, c, http.StatusForbidden)
	}
	// An identified user: the commands that are not theirs are refused
	// first; their own redemptions report the body.
	for _, c := range []call{badInput[0], badInput[3], badInput[4], badInput[6], badInput[8], unknownIDs[3]} {
		check("identified user", ann.Token, c, http.StatusForbidden)
	}
	check("identified user", ann.Token, call{"redeem self malformed", "POST", userPath("self", "/redeem"), malformed}, http.StatusBadRequest)
	check("identified user", ann.Token, badInput[2], http.StatusBadRequest)
	// Who holds the right on some app is told: the app that counts is
	// the account's (or card's), known only from the id.
	for _, c := range []call{unknownIDs[0], unknownIDs[2], unknownIDs[8], unknownIDs[10]} {
		check("CMS user on another app", writerB, c, http.StatusNotFound)
	}
	for _, c := range []call{badInput[0], badInput[8], badInput[10]} {
		check("CMS user on another app", writerB, c, http.StatusBadRequest)
	}
	if n := ts.loyaltyEvents(); n != events {
		t.Fatalf("refused calls appended %d events", n-events)
	}
	if u := ts.loyaltyUser(ts.admin, ann.ID); u.Balance != 1000 || u.TransactionCount != 1 {
		t.Fatalf("refused calls changed ann's account: %+v", u)
	}

	// Allowed.
	for _, a := range []struct {
		who   string
		token string
		calls []call
		want  int
	}{
		{"app token lists its cards", tokA, []call{{"list own cards", "GET", stampCardPath, nil}, getCard}, http.StatusOK},
		{"identified reads", ann.Token, []call{getSelf, txSelf, getAnn, {"list own cards", "GET", stampCardPath, nil}, getCard}, http.StatusOK},
		{"identified redeems", ann.Token, []call{redeemSelf, redeemAnn, redeemCardS(0)}, http.StatusCreated},
		{"read", reader, []call{getAnn, txAnn, search, listCards, getCard}, http.StatusOK},
		{"write", writer, []call{earnAnn, redeemAnn, stampsAnn, defineCard, redeemCard(1)}, http.StatusCreated},
		{"update", updater, []call{adjustAnn}, http.StatusCreated},
		{"update", updater, []call{rebalance, changeCard}, http.StatusOK},
		{"manage", manager, []call{audit}, http.StatusOK},
		{"delete", deleter, []call{retireCard}, http.StatusOK},
	} {
		for _, c := range a.calls {
			check(a.who, a.token, c, a.want)
		}
	}
	// Ann: 1000 − 1 − 1 (her own) + 1 − 1 (writer) + 1 (update) = 999.
	if u := ts.loyaltyUser(ts.admin, ann.ID); u.Balance != 999 || u.TransactionCount != 6 {
		t.Errorf("after the allowed calls: %+v", u)
	}
}

// TestLoyaltyBadInput: each bad request is a 400 in the HALO error shape
// and records nothing.
func TestLoyaltyBadInput(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app := ts.createApp("Strict")
	ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")
	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "test"})
	card := ts.defineCard(ts.admin, map[string]any{"app": app.ID, "name": "Card", "stampsNeeded": 2, "reward": "r"})
	past := int64(1_600_000_000_000)
	long := func(n int) string { return strings.Repeat("x", n) }

	type bad struct {
		name   string
		method string
		path   string
		body   any
		header map[string]string
		status int
	}
	earn, redeem, adjust, stamps := userPath(ann.ID, "/earn"), userPath(ann.ID, "/redeem"), userPath(ann.ID, "/adjust"), userPath(ann.ID, "/stamps")
	cases := []bad{
		{name: "malformed JSON", path: earn, body: `{"amount": `},
		{name: "two values", path: earn, body: `{"amount": 1} {}`},
		{name: "not an object", path: earn, body: `[1]`},
		{name: "empty body", path: earn, body: ``},
		{name: "unknown field", path: earn, body: `{"amount": 1, "points": 1, "reason": "test"}`},
		{name: "no amount", path: earn, body: `{"reason": "x"}`},
		{name: "amount null", path: earn, body: `{"amount": null, "reason": "test"}`},
		{name: "amount 0", path: earn, body: `{"amount": 0, "reason": "test"}`},
		{name: "amount negative", path: earn, body: `{"amount": -5, "reason": "test"}`},
		{name: "amount too big", path: earn, body: `{"amount": 1000000001, "reason": "test"}`},
		{name: "amount beyond int64", path: earn, body: `{"amount": 99999999999999999999, "reason": "test"}`},
		{name: "amount not whole", path: earn, body: `{"amount": 1.5, "reason": "test"}`},
		{name: "amount exponent", path: earn, body: `{"amount": 1e3, "reason": "test"}`},
		{name: "amount string", path: earn, body: `{"amount": "10", "reason": "test"}`},
		{name: "amount bool", path: earn, body: `{"amount": true, "reason": "test"}`},
		{name: "expiresAt past", path: earn, body: map[string]any{"amount": 1, "reason": "test", "expiresAt": past}},
		{name: "expiresAt string", path: earn, body: `{"amount": 1, "expiresAt": "tomorrow", "reason": "test"}`},
		{name: "expiresAt negative", path: earn, body: `{"amount": 1, "expiresAt": -1, "reason": "test"}`},
		{name: "reason too long", path: earn, body: map[string]any{"amount": 1, "reason": long(501)}},
		{name: "reason not a string", path: earn, body: `{"amount": 1, "reason": 5}`},
		{name: "reference too long", path: earn, body: map[string]any{"amount": 1, "reason": "test", "reference": long(256)}},
		{name: "key too long", path: earn, body: map[string]any{"amount": 1, "reason": "test", "idempotencyKey": long(256)}},
		{name: "header and body keys differ", path: earn, body: map[string]any{"amount": 1, "reason": "test", "idempotencyKey": "a"}, header: map[string]string{"Idempotency-Key": "b"}},
		{name: "redeem 0", path: redeem, body: `{"amount": 0, "reason": "test"}`},
		{name: "redeem negative", path: redeem, body: `{"amount": -1, "reason": "test"}`},
		{name: "redeem too big", path: redeem, body: `{"amount": 1000000001, "reason": "test"}`},
		{name: "redeem string", path: redeem, body: `{"amount": "5", "reason": "test"}`},
		{name: "adjust 0", path: adjust, body: `{"amount": 0, "reason": "test"}`},
		{name: "adjust too big", path: adjust, body: `{"amount": -1000000001, "reason": "test"}`},
		{name: "adjust past expiry", path: adjust, body: map[string]any{"amount": 5, "reason": "test", "expiresAt": past}},
		{name: "stamps 0", path: stamps, body: map[string]any{"card": card.ID, "stamps": 0}},
		{name: "stamps negative", path: stamps, body: map[string]any{"card": card.ID, "stamps": -2}},
		{name: "stamps too many", path: stamps, body: map[string]any{"card": card.ID, "stamps": 1001}},
		{name: "stamps string", path: stamps, body: `{"card": "` + card.ID + `", "stamps": "2"}`},
		{name: "stamps without card", path: stamps, body: map[string]any{"stamps": 1}},
		{name: "stamps of an unknown card", path: stamps, body: map[string]any{"card": "nosuchcard", "stamps": 1}, status: http.StatusNotFound},
		{name: "rebalance without user", path: loyaltyRebalancePath, body: map[string]any{}},
		{name: "card without name", path: stampCardPath, body: map[string]any{"app": app.ID, "stampsNeeded": 2, "reward": "r"}},
		{name: "card stampsNeeded 0", path: stampCardPath, body: map[string]any{"app": app.ID, "name": "n", "stampsNeeded": 0, "reward": "r"}},
		{name: "card stampsNeeded 1001", path: stampCardPath, body: map[string]any{"app": app.ID, "name": "n", "stampsNeeded": 1001, "reward": "r"}},
		{name: "card stampsNeeded string", path: stampCardPath, body: `{"app": "` + app.ID + `", "name": "n", "stampsNeeded": "2", "reward": "r"}`},
		{name: "card without reward", path: stampCardPath, body: map[string]any{"app": app.ID, "name": "n", "stampsNeeded": 2}},
		{name: "card name too long", path: stampCardPath, body: map[string]any{"app": app.ID, "name": long(256), "stampsNeeded": 2, "reward": "r"}},
		{name: "card without app", path: stampCardPath, body: map[string]any{"name": "n", "stampsNeeded": 2, "reward": "r"}},
		{name: "card of an unknown app", path: stampCardPath, body: map[string]any{"app": 999, "name": "n", "stampsNeeded": 2, "reward": "r"}},
		{name: "card change stampsNeeded 0", method: "PUT", path: stampCardPath + "/" + card.ID, body: map[string]any{"name": "n", "stampsNeeded": 0, "reward": "r"}},
		{name: "transactions page 0", method: "GET", path: userPath(ann.ID, "/transactions?page=0")},
		{name: "transactions limit 0", method: "GET", path: userPath(ann.ID, "/transactions?limit=0")},
		{name: "transactions limit 5000", method: "GET", path: userPath(ann.ID, "/transactions?limit=5000")},
		{name: "transactions limit abc", method: "GET", path: userPath(ann.ID, "/transactions?limit=abc")},
		{name: "search without app", path: loyaltySearchPath, body: map[string]any{}},
		{name: "search of an unknown app", path: loyaltySearchPath, body: map[string]any{"app": 999}},
		{name: "search unknown sort field", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "sort": []string{"points desc"}}},
		{name: "search bad direction", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "sort": []string{"balance up"}}},
		{name: "search sort not strings", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "sort": []int{1}}},
		{name: "search page 0", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "pagination": map[string]any{"page": 0}}},
		{name: "search limit 0", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "pagination": map[string]any{"limit": 0}}},
		{name: "search limit 1001", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "pagination": map[string]any{"limit": 1001}}},
		{name: "search limit abc", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "pagination": map[string]any{"limit": "abc"}}},
		{name: "search points min above max", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "points": map[string]any{"min": 5, "max": 1}}},
		{name: "search points not whole", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "points": map[string]any{"min": 1.5}}},
		{name: "search name too long", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "name": long(256)}},
		{name: "search hasActiveStampCard string", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "hasActiveStampCard": "yes"}},
		{name: "search unknown field", path: loyaltySearchPath, body: map[string]any{"app": app.ID, "balance": 5}},
		{name: "cards without app", method: "GET", path: stampCardPath},
		{name: "audit without user", method: "GET", path: loyaltyAuditPath},
		{name: "audit bad from", method: "GET", path: loyaltyAuditPath + "?user=" + ann.ID + "&from=noon"},
		{name: "audit to before from", method: "GET", path: loyaltyAuditURL(ann.ID, 2000, 1000)},
	}
	events := ts.loyaltyEvents()
	for _, c := range cases {
		method := c.method
		if method == "" {
			method = http.MethodPost
		}
		rq := request{method: method, path: c.path, token: ts.admin, body: c.body}
		if len(c.header) > 0 {
			rq.header = http.Header{}
			for k, v := range c.header {
				rq.header.Set(k, v)
			}
		}
		want := c.status
		if want == 0 {
			want = http.StatusBadRequest
		}
		r := ts.do(rq)
		if r.Status != want {
			t.Errorf("%s: %s, want %d", c.name, r, want)
			continue
		}
		expectHaloError(t, r, want)
	}
	if n := ts.loyaltyEvents(); n != events {
		t.Errorf("bad requests appended %d events", n-events)
	}
	u := ts.loyaltyUser(ts.admin, ann.ID)
	if u.Balance != 100 || u.TransactionCount != 1 || u.ActiveStampCards != 0 {
		t.Errorf("bad requests changed the account: %+v", u)
	}
	var cards []stampCardView
	ts.mustJSON(ts.get(stampCardPath+"?app="+app.ID, ts.admin), http.StatusOK, &cards)
	if len(cards) != 1 || cards[0].StampsNeeded != 2 || cards[0].Name != "Card" {
		t.Errorf("bad requests changed the cards: %+v", cards)
	}
}

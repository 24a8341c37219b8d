package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestProbeIDs: a caller with no right on another app cannot tell from
// the status whether an id of that app exists (a real id answers as an
// unknown one does), nor what is wrong with a body it could not send
// anyway (a malformed body answers as a valid one does). Content, push
// and app-user endpoints; loyalty has TestLoyaltyRights.
func TestProbeIDs(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	appA, appB := ts.createApp("Victim"), ts.createApp("Prober")
	tokA, tokB := ts.appToken(appA), ts.appToken(appB)

	// What app A holds.
	mod := ts.createModule(ts.admin, moduleBody(appA.ID, "News"))
	item := ts.createItem(ts.admin, itemBody(mod.ID, "Hello", nil))
	ts.transit(ts.admin, item.ID, "publish", nil)
	userA := ts.createAppUser(tokA, map[string]any{"email": "a@example.com"})
	numA := strings.Trim(string(userA.AppID), `"`)
	sched := ts.schedulePush(pushPath, ts.admin, segmentPush(appA.ID, "Sale"))

	// The probers: app B's token, an identified user of app B, a CMS user
	// without rights, and one holding only a module right of app B.
	aliasB := ts.createAppUser(tokB, map[string]any{}).Alias
	ts.register(tokB, "bob@example.com", "secret-123", aliasB)
	identB := ts.loginForm(tokB, "bob@example.com", "secret-123", aliasB).Token.AccessToken
	_, nobody := ts.userWith("nobody")
	modB := ts.createModule(ts.admin, moduleBody(appB.ID, "Other"))
	_, moduleOnly := ts.userWith("moduleonly", grantTo{app: appB.ID, module: modB.ID, perms: []string{"read", "write", "update", "delete"}})

	const unknownItem, unknownModule = "00000000000000000000dead", "00000000000000000000beef"
	const unknownUser, unknownPush = "00000000000000000000cafe", "00000000000000000000f00d"
	const malformed = `{"name": `
	okItem := itemBody(mod.ID, "Changed", nil)
	okModule := moduleBody(appA.ID, "Renamed")
	okPush := segmentPush(appA.ID, "Changed")

	type call struct {
		method, path string
		body         any
	}
	type pair struct {
		name          string
		real, unknown call
	}
	pairs := []pair{
		// Ids in the path.
		{"get item", call{"GET", instancePath + "/" + item.ID, nil}, call{"GET", instancePath + "/" + unknownItem, nil}},
		{"update item", call{"PUT", instancePath + "/" + item.ID, okItem}, call{"PUT", instancePath + "/" + unknownItem, okItem}},
		{"delete item", call{"DELETE", instancePath + "/" + item.ID, nil}, call{"DELETE", instancePath + "/" + unknownItem, nil}},
		{"unpublish item", call{"POST", instancePath + "/" + item.ID + "/unpublish", nil}, call{"POST", instancePath + "/" + unknownItem + "/unpublish", nil}},
		{"item history", call{"GET", instancePath + "/" + item.ID + "/history", nil}, call{"GET", instancePath + "/" + unknownItem + "/history", nil}},
		{"revert item", call{"POST", instancePath + "/" + item.ID + "/history/0/restore", nil}, call{"POST", instancePath + "/" + unknownItem + "/history/0/restore", nil}},
		{"get module", call{"GET", modulePath + "/" + mod.ID, nil}, call{"GET", modulePath + "/" + unknownModule, nil}},
		{"update module", call{"PUT", modulePath + "/" + mod.ID, okModule}, call{"PUT", modulePath + "/" + unknownModule, okModule}},
		{"delete module", call{"DELETE", modulePath + "/" + mod.ID, nil}, call{"DELETE", modulePath + "/" + unknownModule, nil}},
		{"get app user", call{"GET", appUserPath + "/" + userA.ID, nil}, call{"GET", appUserPath + "/" + unknownUser, nil}},
		{"update app user", call{"PUT", appUserPath + "/" + userA.ID, map[string]any{"email": "x@example.com"}},
			call{"PUT", appUserPath + "/" + unknownUser, map[string]any{"email": "x@example.com"}}},
		{"get push", call{"GET", pushPath + "/" + sched.ID, nil}, call{"GET", pushPath + "/" + unknownPush, nil}},
		{"update push", call{"PUT", pushPath + "/" + sched.ID, okPush}, call{"PUT", pushPath + "/" + unknownPush, okPush}},
		{"cancel push", call{"POST", pushPath + "/" + sched.ID + "/cancel", nil}, call{"POST", pushPath + "/" + unknownPush + "/cancel", nil}},
		{"delete push", call{"DELETE", pushPath + "/" + sched.ID, nil}, call{"DELETE", pushPath + "/" + unknownPush, nil}},
		// Ids in the body.
		{"create item in module", call{"POST", instancePath, itemBody(mod.ID, "New", nil)}, call{"POST", instancePath, itemBody(unknownModule, "New", nil)}},
		{"push activity", call{"POST", pushActivityPath, map[string]any{"device": userA.Alias, "schedule": sched.ID, "action": "open"}},
			call{"POST", pushActivityPath, map[string]any{"device": userA.Alias, "schedule": unknownPush, "action": "open"}}},
		{"schedule push to app", call{"POST", pushPath, segmentPush(numA, "New")}, call{"POST", pushPath, segmentPush("987654", "New")}},
		{"search app users of app", call{"POST", appUserSearchPath, map[string]any{"appId": numA}}, call{"POST", appUserSearchPath, map[string]any{"appId": "987654"}}},
		{"search identified of app", call{"POST", identifiedSearch, map[string]any{"appId": numA}}, call{"POST", identifiedSearch, map[string]any{"appId": "987654"}}},
		// Malformed bodies against valid ones.
		{"update item body", call{"PUT", instancePath + "/" + item.ID, okItem}, call{"PUT", instancePath + "/" + item.ID, malformed}},
		{"create item body", call{"POST", instancePath, itemBody(mod.ID, "New", nil)}, call{"POST", instancePath, malformed}},
		{"publish body", call{"POST", instancePath + "/" + item.ID + "/publish", nil}, call{"POST", instancePath + "/" + item.ID + "/publish", malformed}},
		{"create module body", call{"POST", modulePath, moduleBody(appA.ID, "New")}, call{"POST", modulePath, malformed}},
		{"update module body", call{"PUT", modulePath + "/" + mod.ID, okModule}, call{"PUT", modulePath + "/" + mod.ID, malformed}},
		{"update app user body", call{"PUT", appUserPath + "/" + userA.ID, map[string]any{"email": "x@example.com"}}, call{"PUT", appUserPath + "/" + userA.ID, malformed}},
		{"search app users body", call{"POST", appUserSearchPath, map[string]any{"appId": numA}}, call{"POST", appUserSearchPath, malformed}},
		{"search identified body", call{"POST", identifiedSearch, map[string]any{"appId": numA}}, call{"POST", identifiedSearch, malformed}},
		{"schedule push body", call{"POST", pushPath, segmentPush(appA.ID, "New")}, call{"POST", pushPath, malformed}},
		{"update push body", call{"PUT", pushPath + "/" + sched.ID, okPush}, call{"PUT", pushPath + "/" + sched.ID, malformed}},
		{"push activity body", call{"POST", pushActivityPath, map[string]any{"device": userA.Alias, "schedule": sched.ID, "action": "open"}},
			call{"POST", pushActivityPath, malformed}},
	}
	// Devices may update app users and report push activity (of their own
	// app): they are told what is wrong with a body.
	devicesTold := map[string]bool{"update app user body": true, "push activity body": true}
	// An editor of one module may do on that module and its items what
	// its right allows: like a reader of B below, they are told an
	// unknown module or item, and what is wrong with a body naming no
	// module. A known one of app A still refuses them first.
	editorsTold := map[string]bool{"get item": true, "update item": true, "delete item": true, "unpublish item": true,
		"item history": true, "revert item": true, "get module": true, "update module": true, "delete module": true,
		"create item in module": true, "create item body": true}
	probers := []struct {
		name, token string
		told        map[string]bool
	}{
		{"app B's token", tokB, devicesTold}, {"identified user of B", identB, devicesTold},
		{"CMS user without rights", nobody, nil}, {"module right on B only", moduleOnly, editorsTold},
	}
	status := func(token string, c call) int {
		t.Helper()
		r := ts.do(request{method: c.method, path: c.path, token: token, body: c.body})
		if r.Status < 400 {
			t.Errorf("%s %s answered %s", c.method, c.path, r)
		}
		return r.Status
	}
	for _, p := range probers {
		for _, c := range pairs {
			if p.told[c.name] {
				continue
			}
			if real, unknown := status(p.token, c.real), status(p.token, c.unknown); real != unknown {
				t.Errorf("%s, %s: %d for the real one, %d for the other", p.name, c.name, real, unknown)
			}
		}
	}
	// Who holds the right is still told: an editor of one module of B
	// about a bad body for its item or a new one, or an unknown content
	// id (but not about push, app users or new modules, which need a
	// right on a whole app), a reader of B about an unknown id.
	itemB := ts.createItem(ts.admin, itemBody(modB.ID, "Mine", nil))
	_, readerB := ts.userWith("readerb", grantTo{app: appB.ID, perms: []string{"read"}})
	for _, c := range []struct {
		token string
		call  call
		want  int
	}{
		{moduleOnly, call{"PUT", instancePath + "/" + itemB.ID, malformed}, 400},
		{moduleOnly, call{"POST", instancePath + "/" + itemB.ID + "/publish", malformed}, 400},
		{moduleOnly, call{"POST", instancePath, malformed}, 400},
		{moduleOnly, call{"GET", instancePath + "/" + unknownItem, nil}, 404},
		{moduleOnly, call{"PUT", modulePath + "/" + unknownModule, okModule}, 404},
		{moduleOnly, call{"POST", modulePath, malformed}, 403},
		{moduleOnly, call{"GET", pushPath + "/" + unknownPush, nil}, 403},
		{moduleOnly, call{"POST", appUserSearchPath, malformed}, 403},
		{readerB, call{"GET", instancePath + "/" + unknownItem, nil}, 404},
		{readerB, call{"GET", pushPath + "/" + unknownPush, nil}, 404},
		{readerB, call{"GET", appUserPath + "/" + unknownUser, nil}, 404},
		{readerB, call{"POST", appUserSearchPath, malformed}, 400},
	} {
		if got := status(c.token, c.call); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.call.method, c.call.path, got, c.want)
		}
	}
	// Nothing changed.
	if got := ts.item(item.ID); got.Name != "Hello" {
		t.Errorf("item renamed to %q", got.Name)
	}
}

// TestModuleEditorsAreTold: refusals come first only for callers refused
// whatever the request holds. A CMS user who may write to one content
// module may create items in it, so a bad create body (one that names no
// module it could be refused on) is answered with what is wrong with it,
// 400, as for an editor of the whole app; a user who may write nowhere,
// or only to one item (which creates nothing), is refused first. Their
// module right counts for content only: on loyalty, which needs a right
// on a whole app, they are refused first as before.
func TestModuleEditorsAreTold(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Editors")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Articles", articleFields()...))
	other := ts.createModule(ts.admin, moduleBody(app.ID, "Other"))
	item := ts.createItem(ts.admin, itemBody(other.ID, "Theirs", nil))
	member := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")

	_, editor := ts.userWith("editor", grantTo{app: app.ID, module: mod.ID, perms: []string{"write"}})
	_, moduleAll := ts.userWith("moduleall", grantTo{app: app.ID, module: mod.ID, perms: []string{"read", "write", "update", "delete"}})
	_, itemWriter := ts.userWith("itemwriter", grantTo{app: app.ID, item: item.ID, perms: []string{"write"}})
	_, nobody := ts.userWith("nobody")

	badBodies := []struct {
		name string
		body any
	}{
		{"malformed", `{"name": `},
		{"malformed, naming the module", `{"module": "` + mod.ID + `", "name": `},
		{"module of the wrong type", map[string]any{"module": 5, "name": "x", "values": map[string]any{"title": "a"}}},
		{"values of the wrong type", map[string]any{"module": mod.ID, "name": "x", "values": "not an object"}},
		{"a value of the wrong type", itemBody(mod.ID, "x", map[string]any{"title": 5, "price": "cheap"})},
		{"no module", map[string]any{"name": "x", "values": map[string]any{"title": "a"}}},
	}
	for _, who := range []struct {
		name, token string
		want        int
	}{
		{"editor of one module", editor, http.StatusBadRequest},
		{"every right on one module", moduleAll, http.StatusBadRequest},
		{"writer of one item", itemWriter, http.StatusForbidden},
		{"CMS user without rights", nobody, http.StatusForbidden},
	} {
		for _, b := range badBodies {
			r := ts.post(instancePath, who.token, b.body)
			if r.Status != who.want {
				t.Errorf("%s, %s: %s, want %d", who.name, b.name, r, who.want)
				continue
			}
			expectHaloError(t, r, who.want)
		}
	}
	// The editor's right is real: a good body creates an item.
	ts.createItem(editor, itemBody(mod.ID, "Mine", map[string]any{"title": "Hello"}))

	// Content ids: who may read one module or update one item is told an
	// unknown id; who may do nothing anywhere is refused.
	const unknownItem, unknownModule = "00000000000000000000dead", "00000000000000000000beef"
	_, itemUpdater := ts.userWith("itemupdater", grantTo{app: app.ID, item: item.ID, perms: []string{"update"}})
	for _, c := range []struct {
		who, token   string
		method, path string
		body         any
		want         int
	}{
		{"module reader", moduleAll, "GET", instancePath + "/" + unknownItem, nil, http.StatusNotFound},
		{"module reader", moduleAll, "GET", modulePath + "/" + unknownModule, nil, http.StatusNotFound},
		{"item updater", itemUpdater, "POST", instancePath + "/" + unknownItem + "/unpublish", nil, http.StatusNotFound},
		// A right on one item allows nothing on modules.
		{"item updater", itemUpdater, "PUT", modulePath + "/" + unknownModule, moduleBody(app.ID, "X"), http.StatusForbidden},
		{"nobody", nobody, "GET", instancePath + "/" + unknownItem, nil, http.StatusForbidden},
		{"nobody", nobody, "GET", modulePath + "/" + unknownModule, nil, http.StatusForbidden},
		// New modules need write on the whole app.
		{"module editor", editor, "POST", modulePath, `{"app": `, http.StatusForbidden},
	} {
		r := ts.do(request{method: c.method, path: c.path, token: c.token, body: c.body})
		if r.Status != c.want {
			t.Errorf("%s: %s, want %d", c.who, r, c.want)
			continue
		}
		expectHaloError(t, r, c.want)
	}

	// Loyalty needs a right on the whole app: a content editor holds
	// none, and is refused before anything is read of the request.
	events := ts.loyaltyEvents()
	for _, who := range []struct{ name, token string }{{"editor of one module", editor}, {"every right on one module", moduleAll}} {
		for _, c := range []struct {
			path string
			body any
		}{
			{userPath(member.ID, "/earn"), `{"amount": `},
			{userPath(member.ID, "/adjust"), map[string]any{"amount": 0, "reason": "x"}},
			{userPath("identified-nosuchuser", "/earn"), `{"amount": `},
			{stampCardPath, `{"app": `},
		} {
			r := ts.post(c.path, who.token, c.body)
			if r.Status != http.StatusForbidden {
				t.Errorf("%s: %s, want 403", who.name, r)
				continue
			}
			expectHaloError(t, r, http.StatusForbidden)
		}
	}
	if n := ts.loyaltyEvents(); n != events {
		t.Errorf("refused loyalty calls appended %d events", n-events)
	}
}

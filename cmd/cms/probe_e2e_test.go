package main

import (
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
	probers := []struct {
		name, token string
		device      bool
	}{
		{"app B's token", tokB, true}, {"identified user of B", identB, true},
		{"CMS user without rights", nobody, false}, {"module right on B only", moduleOnly, false},
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
			if p.device && devicesTold[c.name] {
				continue
			}
			if real, unknown := status(p.token, c.real), status(p.token, c.unknown); real != unknown {
				t.Errorf("%s, %s: %d for the real one, %d for the other", p.name, c.name, real, unknown)
			}
		}
	}
	// Who holds the right is still told: an editor of one module of B
	// about a bad body for its item, a reader of B about an unknown id.
	itemB := ts.createItem(ts.admin, itemBody(modB.ID, "Mine", nil))
	_, readerB := ts.userWith("readerb", grantTo{app: appB.ID, perms: []string{"read"}})
	for _, c := range []struct {
		token string
		call  call
		want  int
	}{
		{moduleOnly, call{"PUT", instancePath + "/" + itemB.ID, malformed}, 400},
		{moduleOnly, call{"POST", instancePath + "/" + itemB.ID + "/publish", malformed}, 400},
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

package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

// A right on a module or an item counts only inside its own app: a
// manager of one app cannot give a user another app's module or item, and
// such a right, had it been recorded, shows the user nothing of that app.
func TestRightsScopedToTheirApp(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	appA, appB := ts.createApp("Scope App A"), ts.createApp("Scope App B")
	secret := ts.createModule(ts.admin, moduleBody(appA.ID, "Secret", fld("title", ftText)))
	draft := ts.createItem(ts.admin, itemBody(secret.ID, "draft", map[string]any{"title": "hidden"}))
	mine := ts.createModule(ts.admin, moduleBody(appB.ID, "Mine", fld("title", ftText)))
	own := ts.createItem(ts.admin, itemBody(mine.ID, "own", map[string]any{"title": "visible"}))
	own2 := ts.createItem(ts.admin, itemBody(mine.ID, "own too", map[string]any{"title": "visible through the module"}))
	_, managerB := ts.userWith("scope-manager-b", grantTo{app: appB.ID, perms: []string{"manage", "read"}})
	reader, readerTok := ts.userWith("scope-reader")
	unknown := "5f00000000000000000000ab"

	t.Run("grants", func(t *testing.T) {
		ts := ts.with(t)
		for _, scope := range []map[string]any{{"module": secret.ID}, {"item": draft.ID}, {"module": unknown}, {"item": unknown}} {
			b := map[string]any{"user": reader.ID, "app": appB.ID, "permissions": []string{"read"}}
			for k, v := range scope {
				b[k] = v
			}
			for _, tok := range []string{managerB, ts.admin} {
				expectHaloError(t, ts.grant(tok, b), 404)
			}
		}
		if rs := ts.rightsOf(reader.ID, ""); len(rs) != 0 {
			t.Errorf("refused grants left rights: %s", rightsText(rs))
		}
		// Its own app's module and item: granted. Revoking a scope that is
		// not the app's is allowed (so any right can be taken back).
		expectStatus(t, ts.grant(managerB, map[string]any{"user": reader.ID, "app": appB.ID, "module": mine.ID, "permissions": []string{"read"}}), 200)
		expectStatus(t, ts.grant(managerB, map[string]any{"user": reader.ID, "app": appB.ID, "item": own.ID, "permissions": []string{"read"}}), 200)
		expectStatus(t, ts.revoke(managerB, map[string]any{"user": reader.ID, "app": appB.ID, "module": secret.ID, "permissions": []string{"read"}}), 200)
	})

	t.Run("readers ignore a right on another app's module or item", func(t *testing.T) {
		ts := ts.with(t)
		// As a version without the grant check could have recorded them.
		ctx := access.WithActor(context.Background(), access.SystemActor)
		var evs []event.Event
		// The same module id under another app too (created last, so that
		// its right comes after the good one): the right in its own app
		// still counts.
		appC := ts.createApp("Scope App C")
		for _, s := range []struct{ app, kind, id string }{{appB.ID, rights.ModuleScope.String(), secret.ID},
			{appB.ID, rights.ItemScope.String(), draft.ID}, {appC.ID, rights.ModuleScope.String(), mine.ID}} {
			evs = append(evs, commands.WithApp(commands.Wrap(ctx, rights.Granted{UserID: reader.ID, AppID: s.app, ScopeKind: s.kind,
				ScopeID: s.id, Permissions: []string{"read"}}), s.app)...)
		}
		if _, err := ts.app.store.Append(ctx, rights.Stream(reader.ID), event.AnyVersion, evs...); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(ts.rightsOf(reader.ID, "")) < 5 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if rs := ts.rightsOf(reader.ID, ""); len(rs) != 5 {
			t.Fatalf("rights after the append: %s, want 5", rightsText(rs))
		}
		want := []string{own.ID, own2.ID}
		if got := ts.searchIDs(readerTok, map[string]any{}); !sameSet(got, want) {
			t.Errorf("search shows %v, want %v", got, want)
		}
		if got := ts.searchIDs(readerTok, map[string]any{"instanceIds": []string{draft.ID, own.ID}}); !slices.Equal(got, []string{own.ID}) {
			t.Errorf("search by ids shows %v, want only %s", got, own.ID)
		}
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true", readerTok), 200, &list)
		if got := itemIDs(list); !sameSet(got, want) {
			t.Errorf("the item list shows %v, want %v", got, want)
		}
		var mods []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true", readerTok), 200, &mods)
		for _, m := range mods {
			if m.ID == secret.ID {
				t.Errorf("the module list shows app A's %s", m.Name)
			}
		}
		expectOneOf(t, ts.get(modulePath+"/"+secret.ID, readerTok), 403, 404)
		expectOneOf(t, ts.get(instancePath+"/"+draft.ID, readerTok), 403, 404)
		expectOneOf(t, ts.post(syncPath, readerTok, map[string]any{"moduleId": secret.ID}), 403, 404)
	})
}

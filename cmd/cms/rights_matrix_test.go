package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// The permission matrix of the issue: each action × scope × state, with
// real HTTP calls, then the authorizer itself over every resource shape.

var matrixPerms = []string{"read", "write", "update", "delete"}

type matrixScope struct {
	name         string
	module, item string
}

var matrixScopes = []matrixScope{{"app", "", ""}, {"module m1", "m1", ""}, {"item i1", "", "i1"}}

type matrixState string

const (
	stGranted    matrixState = "granted"
	stNotGranted matrixState = "not granted"
	stRevoked    matrixState = "revoked"
	stOtherApp   matrixState = "granted on another app"
)

var matrixStates = []matrixState{stGranted, stNotGranted, stRevoked, stOtherApp}

// matrixCell is one user placed in one state.
type matrixCell struct {
	perm  string
	scope matrixScope
	state matrixState
	user  userView
	token string
}

func (c matrixCell) String() string {
	return fmt.Sprintf("%s on %s, %s", c.perm, c.scope.name, c.state)
}

// scopeIDs maps the matrix's module and item names (m1, i1) to a real
// module and item of each app: a right on a module or an item must name one
// of its app's own. Names it does not know (m2, i2: resources only) stand
// for themselves.
type scopeIDs map[string]map[string]string // app → name → id

// seedScopes creates module m1 and its item i1 in each app.
func seedScopes(ts *testServer, apps ...string) scopeIDs {
	ts.t.Helper()
	ids := scopeIDs{}
	for _, app := range apps {
		m := ts.createModule(ts.admin, moduleBody(app, "Matrix m1", fld("title", ftText)))
		i := ts.createItem(ts.admin, itemBody(m.ID, "Matrix i1", map[string]any{"title": "i1"}))
		ids[app] = map[string]string{"m1": m.ID, "i1": i.ID}
	}
	return ids
}

func (ids scopeIDs) id(app, name string) string {
	if id, ok := ids[app][name]; ok {
		return id
	}
	return name
}

// in is s with its module and item as app's.
func (ids scopeIDs) in(app string, s matrixScope) matrixScope {
	if s.module != "" {
		s.module = ids.id(app, s.module)
	}
	if s.item != "" {
		s.item = ids.id(app, s.item)
	}
	return s
}

func rightBody(user, app string, s matrixScope, perms ...string) map[string]any {
	b := map[string]any{"user": user, "app": app, "permissions": perms}
	if s.module != "" {
		b["module"] = s.module
	}
	if s.item != "" {
		b["item"] = s.item
	}
	return b
}

// expectedRights is what GET /api/authentication/right lists for a cell.
func (c matrixCell) expectedRights(appA, appB string, ids scopeIDs) []rightView {
	r := rightView{Permissions: []string{c.perm}}
	switch c.state {
	case stGranted:
		r.App = appA
	case stOtherApp:
		r.App = appB
	default:
		return []rightView{}
	}
	s := ids.in(r.App, c.scope)
	r.Module, r.Item = s.module, s.item
	return []rightView{r}
}

func sameRights(a, b []rightView) bool {
	return slices.EqualFunc(a, b, func(x, y rightView) bool {
		return x.App == y.App && x.Module == y.Module && x.Item == y.Item && slices.Equal(x.Permissions, y.Permissions)
	})
}

// setUpMatrix creates one user per cell and puts it in its state through
// the HTTP API.
func setUpMatrix(t *testing.T, ts *testServer, appA, appB string, ids scopeIDs) []*matrixCell {
	var cells []*matrixCell
	for _, p := range matrixPerms {
		for _, s := range matrixScopes {
			for _, st := range matrixStates {
				c := &matrixCell{perm: p, scope: s, state: st}
				name := strings.NewReplacer(" ", "-").Replace(fmt.Sprintf("m-%s-%s-%s", p, s.name, st))
				c.user = ts.createUser(name, nil)
				switch st {
				case stGranted:
					ts.mustJSON(ts.grant(ts.admin, rightBody(c.user.ID, appA, ids.in(appA, s), p)), 200, nil)
				case stRevoked:
					ts.mustJSON(ts.grant(ts.admin, rightBody(c.user.ID, appA, ids.in(appA, s), p)), 200, nil)
					var res struct {
						Changed bool        `json:"changed"`
						Rights  []rightView `json:"rights"`
					}
					ts.mustJSON(ts.revoke(ts.admin, rightBody(c.user.ID, appA, ids.in(appA, s), p)), 200, &res)
					if !res.Changed || len(res.Rights) != 0 {
						t.Errorf("%s: revoke answered %+v", c, res)
					}
				case stOtherApp:
					ts.mustJSON(ts.grant(ts.admin, rightBody(c.user.ID, appB, ids.in(appB, s), p)), 200, nil)
				}
				c.token = ts.login(name, userPass)
				cells = append(cells, c)
			}
		}
	}
	return cells
}

func TestRightsMatrix(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	appA := ts.createApp("App A").ID
	appB := ts.createApp("App B").ID
	target := ts.createUser("target", nil)
	ids := seedScopes(ts, appA, appB)
	cells := setUpMatrix(t, ts, appA, appB, ids)

	// (a) the projection lists exactly the expected rights, to the admin
	// and to the user themselves.
	t.Run("listed rights", func(t *testing.T) {
		ts := ts.with(t)
		for _, c := range cells {
			want := c.expectedRights(appA, appB, ids)
			if got := ts.rightsOf(c.user.ID, ""); !sameRights(got, want) {
				t.Errorf("%s: admin lists %s, want %s", c, rightsText(got), rightsText(want))
			}
			for _, p := range slashes("/api/authentication/right") {
				var own struct {
					User   string      `json:"user"`
					Rights []rightView `json:"rights"`
				}
				ts.mustJSON(ts.get(p, c.token), 200, &own)
				if own.User != c.user.ID || !sameRights(own.Rights, want) {
					t.Errorf("%s: GET %s as the user lists %s for %s, want %s", c, p, rightsText(own.Rights), own.User, rightsText(want))
				}
			}
			// Filtered by app A: only what is on A.
			wantA := []rightView{}
			if c.state == stGranted {
				wantA = want
			}
			if got := ts.rightsOf(c.user.ID, appA); !sameRights(got, wantA) {
				t.Errorf("%s: rights on A %s, want %s", c, rightsText(got), rightsText(wantA))
			}
		}
	})

	// (b) read/write/update/delete never allow managing rights, in any
	// state; and the rights stream of the target stays untouched.
	t.Run("only manage may grant", func(t *testing.T) {
		ts := ts.with(t)
		before := len(ts.audit(ts.admin, target.ID, "", "").Changes)
		for _, c := range cells {
			for _, app := range []string{appA, appB} {
				expectHaloError(t, ts.grant(c.token, rightBody(target.ID, app, matrixScope{}, "read")), 403)
				expectHaloError(t, ts.revoke(c.token, rightBody(target.ID, app, matrixScope{}, "read")), 403)
				// Nor grant to themselves.
				expectHaloError(t, ts.grant(c.token, rightBody(c.user.ID, app, c.scope, c.perm)), 403)
			}
			// Nor list another user's rights, or audit them.
			expectHaloError(t, ts.get("/api/authentication/right?user="+target.ID+"&app="+appA, c.token), 403)
			expectHaloError(t, ts.get(auditPath(target.ID, appA, ""), c.token), 403)
		}
		if after := len(ts.audit(ts.admin, target.ID, "", "").Changes); after != before {
			t.Errorf("target's rights stream went from %d to %d changes", before, after)
		}
	})

	// (c) GET /core-api/app/ shows the apps the user holds any right on.
	t.Run("app visibility", func(t *testing.T) {
		ts := ts.with(t)
		for _, c := range cells {
			var want []string
			switch c.state {
			case stGranted:
				want = []string{appA}
			case stOtherApp:
				want = []string{appB}
			}
			if got := ts.appIDs(c.token); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s: sees apps %v, want %v", c, got, want)
			}
			for _, app := range []string{appA, appB} {
				wantStatus := 404
				if slices.Contains(want, app) {
					wantStatus = 200
				}
				expectStatus(t, ts.get("/core-api/app/"+app, c.token), wantStatus)
			}
		}
	})

	// (b) and (d) with the manage permission: granted, on another app,
	// then revoked.
	t.Run("manage", func(t *testing.T) {
		ts := ts.with(t)
		mgr := ts.createUser("manager", nil)
		tok := ts.login("manager", userPass)
		expectHaloError(t, ts.grant(tok, rightBody(target.ID, appA, matrixScope{}, "read")), 403)

		expectStatus(t, ts.grant(ts.admin, rightBody(mgr.ID, appA, matrixScope{}, "manage")), 200)
		for _, s := range matrixScopes {
			expectStatus(t, ts.grant(tok, rightBody(target.ID, appA, ids.in(appA, s), "read", "write")), 200)
			expectHaloError(t, ts.grant(tok, rightBody(target.ID, appB, ids.in(appB, s), "read")), 403)
			expectStatus(t, ts.revoke(tok, rightBody(target.ID, appA, ids.in(appA, s), "write")), 200)
			expectHaloError(t, ts.revoke(tok, rightBody(target.ID, appB, ids.in(appB, s), "read")), 403)
		}
		want := []rightView{{App: appA, Permissions: []string{"read"}}, {App: appA, Item: ids.id(appA, "i1"), Permissions: []string{"read"}},
			{App: appA, Module: ids.id(appA, "m1"), Permissions: []string{"read"}}}
		if got := ts.rightsOf(target.ID, ""); !sameRights(got, want) {
			t.Errorf("target's rights after the manager's grants: %s, want %s", rightsText(got), rightsText(want))
		}
		// A manager may pass manage on (only on their app).
		expectStatus(t, ts.grant(tok, rightBody(target.ID, appA, matrixScope{}, "manage")), 200)
		expectHaloError(t, ts.grant(tok, rightBody(target.ID, appB, matrixScope{}, "manage")), 403)
		expectStatus(t, ts.revoke(tok, rightBody(target.ID, appA, matrixScope{}, "manage")), 200)

		// Listing and auditing another user's rights: on A only.
		expectStatus(t, ts.get("/api/authentication/right?user="+target.ID+"&app="+appA, tok), 200)
		expectHaloError(t, ts.get("/api/authentication/right?user="+target.ID+"&app="+appB, tok), 403)
		expectHaloError(t, ts.get("/api/authentication/right?user="+target.ID, tok), 403)
		rep := ts.audit(tok, target.ID, appA, "")
		if len(rep.Changes) == 0 {
			t.Errorf("the manager's audit of A shows no changes")
		}
		for _, c := range rep.Changes {
			if c.App != appA {
				t.Errorf("audit of A shows a change on %s", c.App)
			}
		}
		expectHaloError(t, ts.get(auditPath(target.ID, appB, ""), tok), 403)
		expectHaloError(t, ts.get(auditPath(target.ID, "", ""), tok), 403)
		if got := ts.appIDs(tok); !slices.Equal(got, []string{appA}) {
			t.Errorf("the manager sees apps %v, want [A]", got)
		}

		// Revoked: everything is refused again, and the app disappears.
		expectStatus(t, ts.revoke(ts.admin, rightBody(mgr.ID, appA, matrixScope{}, "manage")), 200)
		expectHaloError(t, ts.grant(tok, rightBody(target.ID, appA, matrixScope{}, "delete")), 403)
		expectHaloError(t, ts.revoke(tok, rightBody(target.ID, appA, matrixScope{}, "read")), 403)
		expectHaloError(t, ts.get(auditPath(target.ID, appA, ""), tok), 403)
		expectHaloError(t, ts.get("/api/authentication/right?user="+target.ID+"&app="+appA, tok), 403)
		if got := ts.appIDs(tok); len(got) != 0 {
			t.Errorf("after the revoke the manager sees apps %v", got)
		}
		if got := ts.rightsOf(target.ID, ""); !sameRights(got, want) {
			t.Errorf("target's rights changed after the manager lost manage: %s", rightsText(got))
		}

		// Manage on another app only.
		expectStatus(t, ts.grant(ts.admin, rightBody(mgr.ID, appB, matrixScope{}, "manage")), 200)
		expectHaloError(t, ts.grant(tok, rightBody(target.ID, appA, matrixScope{}, "delete")), 403)
		expectStatus(t, ts.grant(tok, rightBody(target.ID, appB, matrixScope{}, "delete")), 200)
	})

	// The authorizer itself, against the same database: every permission ×
	// resource shape for every cell.
	t.Run("authorizer", func(t *testing.T) {
		authorizerMatrix(t, ts, cells, appA, appB, ids)
	})
}

// resource shapes the authorizer is asked about, on app A and app B.
type resShape struct {
	name         string
	module, item string
}

var resShapes = []resShape{
	{"app only", "", ""},
	{"module m1", "m1", ""},
	{"module m2", "m2", ""},
	{"item i1 in m1", "m1", "i1"},
	{"item i2 in m1", "m1", "i2"},
	{"item i2 in m2", "m2", "i2"},
	{"item i1, module unknown", "", "i1"},
}

// covers is the rule: an app right covers everything in the app; a module
// right its module and the module's items; an item right that item.
func covers(s matrixScope, r resShape) bool {
	switch {
	case s.module != "":
		return r.module == s.module
	case s.item != "":
		return r.item == s.item
	}
	return true
}

func authorizerMatrix(t *testing.T, ts *testServer, cells []*matrixCell, appA, appB string, ids scopeIDs) {
	ctx := context.Background()
	authz := ts.app.authz
	allPerms := append(slices.Clone(matrixPerms), "manage")
	for _, c := range cells {
		actor := access.Actor{Kind: access.User, ID: c.user.ID}
		for _, pn := range allPerms {
			p, err := rights.ParsePermission(pn)
			if err != nil {
				t.Fatal(err)
			}
			for _, app := range []string{appA, appB} {
				for _, rs := range resShapes {
					res := rights.Resource{App: app, Module: ids.id(app, rs.module), Item: ids.id(app, rs.item)}
					grantedApp := ""
					switch c.state {
					case stGranted:
						grantedApp = appA
					case stOtherApp:
						grantedApp = appB
					}
					want := grantedApp == app && pn == c.perm && covers(c.scope, rs)
					err := authz.Authorize(ctx, actor, p, res)
					switch {
					case want && err != nil:
						t.Errorf("%s: %s on %s of app %s refused: %v", c, pn, rs.name, appName(app, appA), err)
					case !want && err == nil:
						t.Errorf("%s: %s on %s of app %s allowed", c, pn, rs.name, appName(app, appA))
					case !want && !fault.Is(err, fault.Forbidden):
						t.Errorf("%s: %s on %s of app %s: %v, want a Forbidden fault", c, pn, rs.name, appName(app, appA), err)
					}
				}
			}
		}
	}
	// A right on a module or an item never covers it under another app: a
	// resource naming the right's own module or item, claimed by the other
	// app, is refused.
	for _, c := range cells {
		if c.scope.module == "" && c.scope.item == "" || c.state != stGranted && c.state != stOtherApp {
			continue
		}
		held, other := appA, appB
		if c.state == stOtherApp {
			held, other = appB, appA
		}
		s := ids.in(held, c.scope)
		p, _ := rights.ParsePermission(c.perm)
		res := rights.Resource{App: other, Module: s.module, Item: s.item}
		if err := authz.Authorize(ctx, access.Actor{Kind: access.User, ID: c.user.ID}, p, res); !fault.Is(err, fault.Forbidden) {
			t.Errorf("%s: %s on its own %s%s under app %s: %v, want a Forbidden fault", c, c.perm, s.module, s.item, appName(other, appA), err)
		}
	}
	// Admins may do anything, an app token may only read its own app, an
	// anonymous caller is unauthenticated.
	admin := access.Actor{Kind: access.User, ID: ts.adminID, Admin: true}
	appActor := access.Actor{Kind: access.App, ID: appA}
	for _, pn := range allPerms {
		p, _ := rights.ParsePermission(pn)
		for _, app := range []string{appA, appB} {
			for _, rs := range resShapes {
				res := rights.Resource{App: app, Module: ids.id(app, rs.module), Item: ids.id(app, rs.item)}
				if err := authz.Authorize(ctx, admin, p, res); err != nil {
					t.Errorf("admin: %s on %s: %v", pn, rs.name, err)
				}
				if err := authz.Authorize(ctx, access.SystemActor, p, res); err != nil {
					t.Errorf("system: %s on %s: %v", pn, rs.name, err)
				}
				err := authz.Authorize(ctx, appActor, p, res)
				if want := pn == "read" && app == appA; want != (err == nil) {
					t.Errorf("app token of A: %s on %s of %s: %v", pn, rs.name, appName(app, appA), err)
				}
				if err := authz.Authorize(ctx, access.Actor{}, p, res); !fault.Is(err, fault.Unauthenticated) {
					t.Errorf("anonymous: %s on %s: %v, want Unauthenticated", pn, rs.name, err)
				}
			}
		}
	}
}

func appName(app, appA string) string {
	if app == appA {
		return "A"
	}
	return "B"
}

// rightsAnswer is the answer of grant and revoke.
type rightsAnswer struct {
	User    string      `json:"user"`
	App     string      `json:"app"`
	Changed bool        `json:"changed"`
	Rights  []rightView `json:"rights"`
}

func TestRightsValidation(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	u := ts.createUser("subject", nil)
	app := ts.createApp("Validation").ID
	ids := seedScopes(ts, app)
	m1id, i1id := ids.id(app, "m1"), ids.id(app, "i1")

	t.Run("refused input", func(t *testing.T) {
		ts := ts.with(t)
		cases := []struct {
			name   string
			body   any
			status int
		}{
			{"unknown permission", map[string]any{"user": u.ID, "app": app, "permissions": []string{"publish"}}, 400},
			{"one unknown permission among good ones", map[string]any{"user": u.ID, "app": app, "permissions": []string{"read", "Read"}}, 400},
			{"no permissions", map[string]any{"user": u.ID, "app": app, "permissions": []string{}}, 400},
			{"permissions missing", map[string]any{"user": u.ID, "app": app}, 400},
			{"missing user", map[string]any{"app": app, "permissions": []string{"read"}}, 400},
			{"missing app", map[string]any{"user": u.ID, "permissions": []string{"read"}}, 400},
			{"unknown user", map[string]any{"user": "no-such-user", "app": app, "permissions": []string{"read"}}, 404},
			{"unknown app", map[string]any{"user": u.ID, "app": "no-such-app", "permissions": []string{"read"}}, 400},
			{"module and item", map[string]any{"user": u.ID, "app": app, "module": m1id, "item": i1id, "permissions": []string{"read"}}, 400},
			{"manage on a module", map[string]any{"user": u.ID, "app": app, "module": m1id, "permissions": []string{"manage"}}, 400},
			{"manage on an item", map[string]any{"user": u.ID, "app": app, "item": i1id, "permissions": []string{"read", "manage"}}, 400},
			{"unknown field", map[string]any{"user": u.ID, "app": app, "scope": "app", "permissions": []string{"read"}}, 400},
			{"permissions not a list", map[string]any{"user": u.ID, "app": app, "permissions": "read"}, 400},
			{"malformed JSON", `{"user": "` + u.ID + `", "app": `, 400},
		}
		for _, c := range cases {
			for _, action := range []string{"grant", "revoke"} {
				for _, p := range slashes("/api/authentication/right/" + action) {
					expectHaloError(t, ts.post(p, ts.admin, c.body), c.status)
				}
			}
		}
		if got := ts.audit(ts.admin, u.ID, "", ""); len(got.Changes) != 0 {
			t.Errorf("refused input changed the rights stream: %+v", got.Changes)
		}
	})

	t.Run("revoke removes only the listed permissions from exactly that scope", func(t *testing.T) {
		ts := ts.with(t)
		m1 := ids.in(app, matrixScope{"module m1", "m1", ""})
		// res is the answer of the last call (a fresh value each time:
		// encoding/json reuses slice elements it decodes into).
		var res rightsAnswer
		call := func(r response) {
			res = rightsAnswer{}
			ts.mustJSON(r, 200, &res)
		}
		call(ts.grant(ts.admin, rightBody(u.ID, app, m1, "update", "read")))
		if !res.Changed || res.User != u.ID || res.App != app {
			t.Errorf("grant answered %+v", res)
		}
		call(ts.grant(ts.admin, rightBody(u.ID, app, matrixScope{}, "read")))
		want := []rightView{{App: app, Permissions: []string{"read"}}, {App: app, Module: m1id, Permissions: []string{"read", "update"}}}
		if !sameRights(res.Rights, want) {
			t.Errorf("grant answered rights %s, want %s", rightsText(res.Rights), rightsText(want))
		}
		call(ts.revoke(ts.admin, rightBody(u.ID, app, m1, "read")))
		want = []rightView{{App: app, Permissions: []string{"read"}}, {App: app, Module: m1id, Permissions: []string{"update"}}}
		if !res.Changed || !sameRights(res.Rights, want) {
			t.Errorf("revoke answered changed=%v rights %s, want %s", res.Changed, rightsText(res.Rights), rightsText(want))
		}
		if got := ts.rightsOf(u.ID, app); !sameRights(got, want) {
			t.Errorf("listed %s, want %s", rightsText(got), rightsText(want))
		}
		// Revoking what is not held, or granting what is, changes nothing.
		call(ts.revoke(ts.admin, rightBody(u.ID, app, m1, "delete")))
		if res.Changed {
			t.Errorf("revoking an unheld permission: changed")
		}
		call(ts.revoke(ts.admin, rightBody(u.ID, app, ids.in(app, matrixScope{"item i1", "", "i1"}), "read")))
		if res.Changed {
			t.Errorf("revoking at an item scope never granted: changed")
		}
		call(ts.grant(ts.admin, rightBody(u.ID, app, matrixScope{}, "read")))
		if res.Changed {
			t.Errorf("granting a held permission: changed")
		}
		if got := len(ts.audit(ts.admin, u.ID, "", "").Changes); got != 3 {
			t.Errorf("the rights stream holds %d changes, want 3 (two grants, one revoke)", got)
		}
		// Revoking the last permission of a scope removes the scope.
		call(ts.revoke(ts.admin, rightBody(u.ID, app, m1, "update", "read")))
		want = []rightView{{App: app, Permissions: []string{"read"}}}
		if got := ts.rightsOf(u.ID, app); !sameRights(got, want) || !sameRights(res.Rights, want) {
			t.Errorf("listed %s (answer %s), want %s", rightsText(got), rightsText(res.Rights), rightsText(want))
		}
	})

	t.Run("non-admin without manage", func(t *testing.T) {
		ts := ts.with(t)
		ts.createUser("nobody", nil)
		tok := ts.login("nobody", userPass)
		before := ts.audit(ts.admin, u.ID, "", "")
		for _, action := range []string{"grant", "revoke"} {
			expectHaloError(t, ts.post("/api/authentication/right/"+action, tok, rightBody(u.ID, app, matrixScope{}, "read")), 403)
			expectHaloError(t, ts.post("/api/authentication/right/"+action, tok, rightBody(u.ID, app, matrixScope{}, "manage")), 403)
		}
		after := ts.audit(ts.admin, u.ID, "", "")
		if len(after.Changes) != len(before.Changes) || !sameRights(after.Effective, before.Effective) {
			t.Errorf("the rights stream changed: %d -> %d changes", len(before.Changes), len(after.Changes))
		}
	})
}

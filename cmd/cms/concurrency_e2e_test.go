package main

import (
	"net/http"
	"slices"
	"sync"
	"testing"
)

// TestConcurrentCommands: commands racing on one stream either all land
// (grants: retried on version conflicts) or exactly one wins (a username).
func TestConcurrentCommands(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Race").ID
	u := ts.createUser("racer", nil)

	t.Run("one username, many creators", func(t *testing.T) {
		ts := ts.with(t)
		const n = 6
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := ts.do(request{method: "POST", path: "/core-api/user/", token: ts.admin,
					body: map[string]any{"username": "contested", "password": userPass}})
				statuses[i] = r.Status
			}()
		}
		wg.Wait()
		created, conflicts := 0, 0
		for _, s := range statuses {
			switch s {
			case 201:
				created++
			case 409:
				conflicts++
			}
		}
		if created != 1 || conflicts != n-1 {
			t.Errorf("statuses %v, want one 201 and %d 409", statuses, n-1)
		}
		n2 := 0
		for _, name := range ts.usernames() {
			if name == "contested" {
				n2++
			}
		}
		if n2 != 1 {
			t.Errorf("%d users named contested", n2)
		}
	})

	t.Run("concurrent grants on one user all land", func(t *testing.T) {
		ts := ts.with(t)
		// Five racers: commands.Update makes at most commands.MaxAttempts
		// (5) attempts, and a racer loses an attempt only when another one
		// commits, so up to five concurrent changes must all land. (More
		// racers on one stream may get 409 "changed concurrently".)
		type job struct {
			perm  string
			scope matrixScope
		}
		app1 := matrixScope{"app", "", ""}
		m1 := seedScopes(ts, app).in(app, matrixScope{"module m1", "m1", ""})
		jobs := []job{{"read", app1}, {"write", app1}, {"update", app1}, {"delete", app1}, {"read", m1}}
		statuses := make([]response, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = ts.do(request{method: "POST", path: "/api/authentication/right/grant", token: ts.admin,
					body: rightBody(u.ID, app, j.scope, j.perm)})
			}()
		}
		wg.Wait()
		for _, r := range statuses {
			if r.Status != http.StatusOK {
				t.Errorf("concurrent grant: %s", r)
			}
		}
		want := []rightView{{App: app, Permissions: []string{"read", "write", "update", "delete"}},
			{App: app, Module: m1.module, Permissions: []string{"read"}}}
		if got := ts.rightsOf(u.ID, app); !sameRights(got, want) {
			t.Errorf("after concurrent grants: %s, want %s", rightsText(got), rightsText(want))
		}
		rep := ts.audit(ts.admin, u.ID, "", "")
		if len(rep.Changes) != len(jobs) {
			t.Errorf("the rights stream holds %d changes, want %d", len(rep.Changes), len(jobs))
		}
		if !sameRights(rep.Effective, want) {
			t.Errorf("log replay: %s", rightsText(rep.Effective))
		}
		var positions []int64
		for _, c := range rep.Changes {
			positions = append(positions, c.Position)
		}
		if !slices.IsSorted(positions) {
			t.Errorf("audit positions not in order: %v", positions)
		}
	})
}

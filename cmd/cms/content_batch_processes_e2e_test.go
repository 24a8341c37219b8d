package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/content"
)

// Two processes take batches for one module at once while the module
// changes (a field added each time: a change holds the module's item
// writes back, and the chunks whose guard it fails are written item by
// item). Every create that a batch answered as done is in the module
// once, seen alike through both processes, at the revision it was
// answered with. Then both processes update the same items with the
// revision they read: per item one update succeeds and the other is a
// 409, and the item ends at the winner's name.
func TestContentBatchTwoProcesses(t *testing.T) {
	t.Parallel()
	a := startContentServer(t)
	b := a.another(t)
	servers := []*testServer{a, b}
	app := a.createApp("Two processes")
	fields := []map[string]any{fld("title", ftText, "required", true), fld("n", ftNumber)}
	mod := a.createModule(a.admin, moduleBody(app.ID, "Shared", fields...))

	const workers, batches, per, changes = 4, 4, 60, 3
	var (
		mu      sync.Mutex
		created = map[string]instView{} // title → the item as its batch answered it
		done    atomic.Int32            // batches answered
		changed = make(chan struct{})   // closed once the changes are made
	)
	atOnce(t, workers+1, func(w int) error {
		if w == workers {
			// The module changes, through either process, while the
			// batches run: change k once k rounds of batches are done.
			// Each worker's last batch waits for the last change, so
			// that every change has batches after it in the log however
			// long a change takes.
			defer close(changed)
			fs := slices.Clone(fields)
			for k := range changes {
				for deadline := time.Now().Add(time.Minute); done.Load() < int32(k*workers+1); time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						return fmt.Errorf("module change %d: %d batches done after a minute", k, done.Load())
					}
				}
				fs = append(fs, fld(fmt.Sprintf("extra%d", k), ftText))
				r := servers[k%2].put(modulePath+"/"+mod.ID, a.admin, moduleBody(app.ID, "Shared", fs...))
				if r.Status != 200 {
					return fmt.Errorf("module change %d: %s", k, r)
				}
			}
			return nil
		}
		ts := servers[w%2]
		for bt := range batches {
			if bt == batches-1 {
				<-changed
			}
			var items []map[string]any
			for j := range per {
				title := fmt.Sprintf("w%d b%d i%d", w, bt, j)
				items = append(items, itemBody(mod.ID, title, map[string]any{"title": title, "n": j}))
			}
			r := ts.post(batchPath, a.admin, map[string]any{"created": items})
			var ans batchAnswer
			if r.Status != 200 || decodeNum(r.Body, &ans) != nil {
				return fmt.Errorf("worker %d batch %d: %s", w, bt, r)
			}
			if c := ans.Results["create"]; c == nil || c.Success != per || c.Failure != 0 {
				return fmt.Errorf("worker %d batch %d: create counters %+v, want %d successes: %s", w, bt, c, per, r)
			}
			for _, op := range ans.Operations {
				var it instView
				if err := decodeNum(op.Data, &it); err != nil || it.ID == "" || it.Name != items[op.Position]["name"] {
					return fmt.Errorf("worker %d batch %d: create #%d answered %s", w, bt, op.Position, op.Data)
				}
				mu.Lock()
				_, dup := created[it.Name]
				created[it.Name] = it
				mu.Unlock()
				if dup {
					return fmt.Errorf("worker %d batch %d: %q answered twice", w, bt, it.Name)
				}
			}
			done.Add(1)
		}
		return nil
	})
	if t.Failed() {
		return
	}
	if got := len(a.module(mod.ID).Fields); got != len(fields)+changes {
		t.Fatalf("the module has %d fields, want %d", got, len(fields)+changes)
	}
	// In the log, each change has items of the batches before and after it.
	rows, err := a.app.pool.Query(context.Background(), `SELECT
		(SELECT count(*) FROM events e WHERE e.event_type = 'content.item_created' AND e.data->>'Module' = $2
			AND (e.transaction_id, e.global_position) < (m.transaction_id, m.global_position)),
		(SELECT count(*) FROM events e WHERE e.event_type = 'content.item_created' AND e.data->>'Module' = $2
			AND (e.transaction_id, e.global_position) > (m.transaction_id, m.global_position))
		FROM events m WHERE m.stream_id = $1 AND m.event_type = 'content.module_fields_changed'`, content.ModuleStream(mod.ID), mod.ID)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sp [2]int64, err error) {
		return sp, r.Scan(&sp[0], &sp[1])
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != changes {
		t.Fatalf("%d field changes in the log, want %d", len(splits), changes)
	}
	for k, sp := range splits {
		if sp[0] == 0 || sp[1] == 0 {
			t.Errorf("change %d has %d items before it in the log and %d after: the batches did not run around it", k, sp[0], sp[1])
		}
	}
	want := []string{}
	for name, it := range created {
		want = append(want, fmt.Sprintf("%s@%d", name, it.Revision))
	}
	slices.Sort(want)
	if len(want) != workers*batches*per {
		t.Fatalf("%d creates answered, want %d", len(want), workers*batches*per)
	}
	for i, ts := range servers {
		if got := ts.moduleState(mod.ID); !slices.Equal(got, want) {
			t.Fatalf("process %d lists %d items, want the %d created (first %.3q, want %.3q)", i, len(got), len(want), got, want)
		}
	}

	// Both processes update the same items, each with the revision it
	// read.
	var targets []instView
	for _, it := range created {
		if len(targets) < 30 {
			targets = append(targets, it)
		}
	}
	answers := make([]batchAnswer, 2)
	atOnce(t, 2, func(i int) error {
		var ups []map[string]any
		for _, it := range targets {
			name := fmt.Sprintf("%s by %d", it.Name, i)
			ups = append(ups, itemBody(mod.ID, name, map[string]any{"title": name}, "id", it.ID, "revision", it.Revision))
		}
		r := servers[i].post(batchPath, a.admin, map[string]any{"updated": ups})
		if r.Status != 200 || decodeNum(r.Body, &answers[i]) != nil {
			return fmt.Errorf("process %d: %s", i, r)
		}
		return nil
	})
	if t.Failed() {
		return
	}
	won := map[string]string{}   // item id → the winning name
	was := map[string]instView{} // item id → the item as created
	for n, it := range targets {
		var wins []string
		for i, ans := range answers {
			op, ok := ans.find("update", n)
			if !ok {
				t.Fatalf("process %d: no update #%d", i, n)
			}
			if op.Success {
				wins = append(wins, op.instanceOf(t).Name)
			} else if status, _ := op.errorOf(t); status != 409 {
				t.Errorf("process %d, update of %s: status %d, want 409: %s", i, it.ID, status, op.Data)
			}
		}
		if len(wins) != 1 {
			t.Fatalf("item %s: %d updates succeeded (%q), want one", it.ID, len(wins), wins)
		}
		won[it.ID], was[it.ID] = wins[0], it
	}
	for i, ts := range servers {
		seen := 0
		for _, it := range ts.moduleItems(mod.ID) {
			name, ok := won[it.ID]
			if !ok {
				continue
			}
			seen++
			if it.Name != name || it.Revision != was[it.ID].Revision+1 {
				t.Errorf("process %d: item %s is %q at revision %d, want %q at %d", i, it.ID, it.Name, it.Revision, name, was[it.ID].Revision+1)
			}
		}
		if seen != len(won) {
			t.Errorf("process %d lists %d of the %d updated items", i, seen, len(won))
		}
	}
}

package content_test

import (
	"slices"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// TestSync follows one module through a first sync at From and an
// incremental one from From to To.
func TestSync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const (
		from = t0 + 60_000
		to   = t0 + 100_000
	)
	f.module(t0, "m1", "a1", field("title", "01"), field("label", "15"))
	f.module(t0, "m2", "a1", field("title", "01"))
	ev := func(at int64, e interface{ EventType() string }) { f.apply(at, e) }
	ms := time.UnixMilli
	label := map[string]any{"en-US": "Hi", "es-ES": "Hola"}

	// Before From.
	f.item(t0+1000, "a", "a1", "m1", "untouched", map[string]any{"label": label}, t0+1000)
	f.item(t0+2000, "b", "a1", "m1", "edited", nil, t0+2000)
	f.item(t0+3000, "c", "a1", "m1", "deleted", nil, t0+3000)
	f.item(t0+4000, "d", "a1", "m1", "expires between syncs", nil, t0+4000)
	ev(t0+4500, content.ItemExpirySet{ItemID: "d", App: "a1", Module: "m1", RemovedAt: ms(t0 + 80_000)})
	f.item(t0+5000, "e", "a1", "m1", "scheduled between syncs", nil, t0+75_000)
	f.item(t0+6000, "h", "a1", "m1", "expired long ago", nil, t0+6000)
	ev(t0+6500, content.ItemExpirySet{ItemID: "h", App: "a1", Module: "m1", RemovedAt: ms(t0 + 10_000)})
	f.item(t0+7000, "k", "a1", "m1", "draft", nil, 0)
	f.item(t0+8000, "l", "a1", "m1", "unpublished", nil, t0+8000)
	f.item(t0+9000, "n", "a1", "m1", "archive scheduled", nil, t0+9000)
	f.item(t0+9500, "o", "a1", "m2", "other module", nil, t0+9500)
	// Within SyncMargin before From: committed late, perhaps.
	f.item(from-1000, "m", "a1", "m1", "late commit", nil, from-1000)

	sync := func(q rmcontent.SyncQuery) rmcontent.SyncResult {
		t.Helper()
		res, err := f.store.Sync(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := sync(rmcontent.SyncQuery{Apps: []string{"a1"}, Module: "m1", To: from, Locale: "es-ES", Fields: f.fields})
	if got := ids(first.Created); !slices.Equal(got, []string{"a", "b", "c", "d", "l", "n", "m"}) {
		t.Errorf("first sync created %v", got)
	}
	if len(first.Updated) != 0 || len(first.Deleted) != 0 || first.Timestamp != from {
		t.Errorf("first sync: updated %v deleted %v timestamp %d", ids(first.Updated), first.Deleted, first.Timestamp)
	}
	if first.Created[0].Values["label"] != "Hola" {
		t.Errorf("first sync label: %v", first.Created[0].Values["label"])
	}

	// Between From and To.
	f.item(t0+65_000, "g", "a1", "m1", "new", nil, t0+65_000)
	ev(t0+70_000, content.ItemEdited{ItemID: "b", App: "a1", Module: "m1", Name: "edited!", Values: map[string]any{}, Changed: []string{"name"}})
	ev(t0+70_000, content.ItemDeleted{ItemID: "c", App: "a1", Module: "m1"})
	ev(t0+70_000, content.ItemEdited{ItemID: "k", App: "a1", Module: "m1", Name: "draft!", Values: map[string]any{}, Changed: []string{"name"}})
	ev(t0+70_000, content.ItemUnpublished{ItemID: "l", App: "a1", Module: "m1"})
	ev(t0+70_000, content.ItemArchived{ItemID: "n", App: "a1", Module: "m1", ArchivedAt: ms(t0 + 200_000)})
	ev(t0+70_000, content.ItemEdited{ItemID: "o", App: "a1", Module: "m2", Name: "other!", Values: map[string]any{}, Changed: []string{"name"}})

	fromV := int64(from)
	inc := sync(rmcontent.SyncQuery{Apps: []string{"a1"}, Module: "m1", From: &fromV, To: to, Locale: "en-US", Fields: f.fields})
	// e: its publication date passed; g: new; m: within the margin; n: its
	// state changed (an archive date set) while it stayed live.
	if got := ids(inc.Created); !slices.Equal(got, []string{"e", "n", "m", "g"}) {
		t.Errorf("created %v", got)
	}
	if got := ids(inc.Updated); !slices.Equal(got, []string{"b"}) {
		t.Errorf("updated %v", got)
	}
	// c deleted, d expired without any write, l unpublished.
	if !slices.Equal(inc.Deleted, []string{"c", "d", "l"}) {
		t.Errorf("deleted %v", inc.Deleted)
	}
	if inc.Timestamp != to {
		t.Errorf("timestamp %d", inc.Timestamp)
	}
	if len(inc.Updated) == 1 && inc.Updated[0].Name != "edited!" {
		t.Errorf("updated item is stale: %+v", inc.Updated[0])
	}

	// Just before d expires, it is still live and was not changed.
	early := sync(rmcontent.SyncQuery{AllApps: true, Module: "m1", From: &fromV, To: t0 + 79_999})
	if slices.Contains(early.Deleted, "d") || slices.Contains(ids(early.Created), "e") != true {
		t.Errorf("at t0+79999: created %v deleted %v", ids(early.Created), early.Deleted)
	}
	// The next incremental sync reports nothing new.
	toV := int64(to)
	if again := sync(rmcontent.SyncQuery{AllApps: true, Module: "m1", From: &toV, To: to + 10_000}); len(again.Created)+len(again.Updated)+len(again.Deleted) != 0 {
		t.Errorf("nothing changed, got created %v updated %v deleted %v", ids(again.Created), ids(again.Updated), again.Deleted)
	}

	// Apps the caller cannot see give nothing.
	if res := sync(rmcontent.SyncQuery{Apps: []string{"a2"}, Module: "m1", To: to}); len(res.Created) != 0 {
		t.Errorf("foreign app: %v", ids(res.Created))
	}
	if _, err := f.store.Sync(f.ctx, rmcontent.SyncQuery{AllApps: true, To: to}); !fault.Is(err, fault.Invalid) {
		t.Errorf("no module: %v", err)
	}
}

// A sync describes the instant its client asks for, which may be well
// before the changes it reads (Android sends toSync from the device's
// clock): an item created with a window of publication already past,
// synced by a client whose clock is behind, is created for it, and its
// next sync lists it deleted. A concept created meanwhile is not listed.
func TestSyncFromABehindClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const now = t0 + 3_600_000
	f.module(t0, "m1", "a1", field("title", "01"))
	f.apply(now, content.ItemCreated{ItemID: "w", App: "a1", Module: "m1", Name: "window", Values: map[string]any{},
		PublishedAt: time.UnixMilli(now - 3_000_000), RemovedAt: time.UnixMilli(now - 60_000), By: "Ann"})
	f.item(now, "k", "a1", "m1", "concept", nil, 0)
	behind := int64(now - 300_000) // the device's clock, five minutes behind
	first, err := f.store.Sync(f.ctx, rmcontent.SyncQuery{Apps: []string{"a1"}, Module: "m1", To: behind, Fields: f.fields})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(first.Created); !slices.Equal(got, []string{"w"}) {
		t.Fatalf("first sync at the device's clock: created %v, want [w]", got)
	}
	next, err := f.store.Sync(f.ctx, rmcontent.SyncQuery{Apps: []string{"a1"}, Module: "m1", From: &behind, To: now + 10_000, Fields: f.fields})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(next.Deleted, []string{"w"}) || len(next.Created)+len(next.Updated) != 0 {
		t.Errorf("next sync: created %v updated %v deleted %v, want w deleted", ids(next.Created), ids(next.Updated), next.Deleted)
	}
}

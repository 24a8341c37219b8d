package content

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func itemModule(t testing.TB) Module {
	t.Helper()
	return newModule(t, ModuleSpec{
		Name: "Posts",
		Tags: []Tag{{ID: "t-red", Name: "color", Value: "red"}, {Name: "color", Value: "blue"}},
		Fields: []Field{
			{ID: "f1", Name: "title", Type: typeID(t, "Text"), Required: true},
			{ID: "f2", Name: "count", Type: typeID(t, "Number")},
			{ID: "f3", Name: "body", Type: typeID(t, "Long text")},
		},
	})
}

// history keeps an item and its state after every revision.
type history struct {
	t     *testing.T
	item  Item
	snaps []Item // snaps[r] is the item at revision r
}

func (h *history) apply(evs []any, err error) []any {
	h.t.Helper()
	if err != nil {
		h.t.Fatalf("decision failed: %v", err)
	}
	for _, e := range evs {
		h.item = h.item.Apply(e)
		h.snaps = append(h.snaps, h.item)
	}
	return evs
}

func newItem(t *testing.T, m Module, c Content, d Dates) *history {
	t.Helper()
	h := &history{t: t}
	h.apply(CreateItem(Item{}, "i1", m, c, d, "Ann"))
	return h
}

func TestCreateItem(t *testing.T) {
	m := itemModule(t)
	c := Content{Name: "  Hello ", Values: map[string]any{"title": "T", "count": json.Number("3")}, ExternalID: "ext-1"}
	d := Dates{PublishedAt: t0, RemovedAt: t0.Add(time.Hour)}
	evs, err := CreateItem(Item{}, "i1", m, c, d, "Ann")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{ItemCreated{ItemID: "i1", App: "app1", Module: "m1", Name: "Hello", Values: c.Values, Tags: []Tag{},
		ExternalID: "ext-1", PublishedAt: t0, RemovedAt: t0.Add(time.Hour), By: "Ann"}}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("got %#v\nwant %#v", evs, want)
	}
	i := fold(Item{}, evs)
	if !i.Exists() || i.Revision != 0 || i.ID != "i1" || i.Module != "m1" || i.App != "app1" || i.Content.Name != "Hello" ||
		!i.Dates.PublishedAt.Equal(t0) || i.Deleted {
		t.Fatalf("item %+v", i)
	}

	// Values absent: an empty map, never nil.
	_, err = CreateItem(Item{}, "i2", m, Content{Name: "x", Values: nil}, Dates{}, "Ann")
	if err == nil {
		t.Fatal("a missing required value was accepted")
	}
	m2 := newModule(t, ModuleSpec{Name: "Free"})
	evs, err = CreateItem(Item{}, "i2", m2, Content{Name: "x"}, Dates{}, "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if v := evs[0].(ItemCreated).Values; v == nil || len(v) != 0 {
		t.Fatalf("values %#v", v)
	}

	// Refusals.
	if _, err := CreateItem(i, "i1", m, c, d, "Ann"); !fault.Is(err, fault.Conflict) {
		t.Errorf("existing: %v", err)
	}
	if _, err := CreateItem(Item{}, "i3", Module{ID: "nope"}, c, d, "Ann"); !fault.Is(err, fault.NotFound) {
		t.Errorf("missing module: %v", err)
	}
	gone := fold(m, mustEvents(t)(m.Delete("Ann")))
	if _, err := CreateItem(Item{}, "i3", gone, c, d, "Ann"); !fault.Is(err, fault.NotFound) {
		t.Errorf("deleted module: %v", err)
	}
	for name, bad := range map[string]Content{
		"empty name":    {Name: "  ", Values: c.Values},
		"long name":     {Name: string(make([]rune, 1001)), Values: c.Values},
		"long external": {Name: "x", Values: c.Values, ExternalID: string(make([]byte, 201))},
		"bad value":     {Name: "x", Values: map[string]any{"title": "T", "count": "three"}},
		"unknown value": {Name: "x", Values: map[string]any{"title": "T", "nope": 1}},
		"empty tag":     {Name: "x", Values: c.Values, Tags: []Tag{{Value: "v"}}},
	} {
		if _, err := CreateItem(Item{}, "i3", m, bad, Dates{}, "Ann"); !fault.Is(err, fault.Invalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var fe *fault.Error
	_, err = CreateItem(Item{}, "i3", m, Content{Name: "x", Values: map[string]any{"title": "T", "count": "three"}}, Dates{}, "Ann")
	if !errors.As(err, &fe) || fe.Extra["field"] != "count" || fe.Extra["error"] != ErrNumber {
		t.Errorf("violation detail: %v", err)
	}
	for name, bad := range map[string]Dates{
		"removed before published": {PublishedAt: t0, RemovedAt: t0.Add(-time.Second)},
		"removed at published":     {PublishedAt: t0, RemovedAt: t0},
	} {
		if _, err := CreateItem(Item{}, "i3", m, c, bad, "Ann"); !fault.Is(err, fault.Invalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An expiry without a publication date is fine.
	if _, err := CreateItem(Item{}, "i3", m, c, Dates{RemovedAt: t0}, "Ann"); err != nil {
		t.Errorf("expiry only: %v", err)
	}
}

func mustEvents(t *testing.T) func([]any, error) []any {
	return func(evs []any, err error) []any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
}

func TestTagsMustBeAllowedByTheModule(t *testing.T) {
	m := itemModule(t)
	vals := map[string]any{"title": "T"}
	for _, ok := range [][]Tag{
		{{ID: "t-red"}},
		{{Name: "color", Value: "red"}},
		{{Name: "color", Value: "blue", TagType: "x"}},
		nil,
	} {
		if _, err := CreateItem(Item{}, "i1", m, Content{Name: "x", Values: vals, Tags: ok}, Dates{}, "Ann"); err != nil {
			t.Errorf("tags %+v refused: %v", ok, err)
		}
	}
	for _, bad := range [][]Tag{
		{{Name: "color", Value: "green"}},
		{{ID: "t-blue"}},
		{{ID: "t-red"}, {Name: "size", Value: "L"}},
	} {
		_, err := CreateItem(Item{}, "i1", m, Content{Name: "x", Values: vals, Tags: bad}, Dates{}, "Ann")
		var fe *fault.Error
		if !fault.Is(err, fault.Invalid) || !errors.As(err, &fe) || fe.Extra["field"] != "tags" {
			t.Errorf("tags %+v: %v, want invalid on tags", bad, err)
		}
	}
	// Edits are checked the same way.
	h := newItem(t, m, Content{Name: "x", Values: vals}, Dates{})
	if _, err := h.item.Edit(m, Content{Name: "x", Values: vals, Tags: []Tag{{Name: "color", Value: "green"}}}, Dates{}, nil, "Bob"); !fault.Is(err, fault.Invalid) {
		t.Errorf("edit with a foreign tag: %v", err)
	}
	// A module without tags allows any.
	free := newModule(t, ModuleSpec{Name: "Free"})
	if _, err := CreateItem(Item{}, "i1", free, Content{Name: "x", Tags: []Tag{{Name: "any", Value: "thing"}}}, Dates{}, "Ann"); err != nil {
		t.Errorf("free module: %v", err)
	}
}

func TestEditChanges(t *testing.T) {
	m := itemModule(t)
	h := newItem(t, m, Content{Name: "First", Values: map[string]any{"title": "T", "count": json.Number("1"), "body": "B"}}, Dates{})

	evs := h.apply(h.item.Edit(m, Content{Name: "Second", Values: map[string]any{"title": "T", "count": json.Number("2")},
		Tags: []Tag{{ID: "t-red"}}}, Dates{}, nil, "Bob"))
	if len(evs) != 1 {
		t.Fatalf("events %v", types(evs))
	}
	e, ok := evs[0].(ItemEdited)
	if !ok {
		t.Fatalf("event %T", evs[0])
	}
	wantChanged := []string{"name", "tags", "values.body", "values.count"}
	if !reflect.DeepEqual(e.Changed, wantChanged) {
		t.Fatalf("changed %v, want %v", e.Changed, wantChanged)
	}
	if e.ItemID != "i1" || e.App != "app1" || e.Module != "m1" || e.Name != "Second" || e.By != "Bob" || len(e.Tags) != 1 {
		t.Fatalf("edited %+v", e)
	}
	if h.item.Content.Name != "Second" || h.item.Revision != 1 || h.item.Content.Values["count"] != json.Number("2") {
		t.Fatalf("item after edit %+v", h.item)
	}
	if _, has := h.item.Content.Values["body"]; has {
		t.Fatal("removed value still present")
	}

	// Only a value.
	evs = h.apply(h.item.Edit(m, Content{Name: "Second", Values: map[string]any{"title": "T2", "count": json.Number("2")},
		Tags: []Tag{{ID: "t-red"}}}, Dates{}, nil, "Bob"))
	if len(evs) != 1 || !reflect.DeepEqual(evs[0].(ItemEdited).Changed, []string{"values.title"}) {
		t.Fatalf("value edit: %#v", evs)
	}
	// Only the external id.
	evs = h.apply(h.item.Edit(m, Content{Name: "Second", Values: map[string]any{"title": "T2", "count": json.Number("2")},
		Tags: []Tag{{ID: "t-red"}}, ExternalID: "e"}, Dates{}, nil, "Bob"))
	if len(evs) != 1 || !reflect.DeepEqual(evs[0].(ItemEdited).Changed, []string{"externalId"}) {
		t.Fatalf("external id edit: %#v", evs)
	}

	// The same content (numbers in other Go types, name with spaces) is no change.
	evs, err := h.item.Edit(m, Content{Name: " Second ", Values: map[string]any{"title": "T2", "count": float64(2)},
		Tags: []Tag{{ID: "t-red"}}, ExternalID: "e"}, Dates{}, nil, "Bob")
	if err != nil || len(evs) != 0 {
		t.Fatalf("no-op edit: %v, %v", types(evs), err)
	}
	// Nil and empty tags are the same.
	h2 := newItem(t, m, Content{Name: "x", Values: map[string]any{"title": "T"}}, Dates{})
	evs, err = h2.item.Edit(m, Content{Name: "x", Values: map[string]any{"title": "T"}, Tags: nil}, Dates{}, nil, "Bob")
	if err != nil || len(evs) != 0 {
		t.Fatalf("nil tags: %v, %v", types(evs), err)
	}
	// An invalid edit is refused.
	if _, err := h.item.Edit(m, Content{Name: "x", Values: map[string]any{}}, Dates{}, nil, "Bob"); !fault.Is(err, fault.Invalid) {
		t.Fatalf("missing required: %v", err)
	}
}

func TestEditRevisions(t *testing.T) {
	m := itemModule(t)
	vals := map[string]any{"title": "T"}
	h := newItem(t, m, Content{Name: "a", Values: vals}, Dates{})
	rev := int64(0)
	h.apply(h.item.Edit(m, Content{Name: "b", Values: vals}, Dates{}, &rev, "Bob"))
	if h.item.Revision != 1 {
		t.Fatalf("revision %d", h.item.Revision)
	}
	// Revision 0 is stale now.
	_, err := h.item.Edit(m, Content{Name: "c", Values: vals}, Dates{}, &rev, "Bob")
	var stale *StaleRevisionError
	if !errors.As(err, &stale) {
		t.Fatalf("stale edit: %v (%T)", err, err)
	}
	if stale.Current != 1 || stale.Sent != 0 || stale.ItemID != "i1" {
		t.Fatalf("stale %+v", stale)
	}
	if stale.Error() == "" {
		t.Fatal("empty message")
	}
	// A revision from the future is stale too.
	future := int64(7)
	if _, err := h.item.Edit(m, Content{Name: "c", Values: vals}, Dates{}, &future, "Bob"); !errors.As(err, &stale) || stale.Current != 1 {
		t.Fatalf("future revision: %v", err)
	}
	// Delete checks the revision as well.
	if _, err := h.item.Delete(&rev, "Bob"); !errors.As(err, &stale) {
		t.Fatalf("stale delete: %v", err)
	}
	cur := int64(1)
	h.apply(h.item.Delete(&cur, "Bob"))
	if !h.item.Deleted || h.item.Revision != 2 {
		t.Fatalf("after delete %+v", h.item)
	}
	// Deleting it again changes nothing, whatever revision is named.
	for _, r := range []*int64{nil, &rev, &cur} {
		if evs, err := h.item.Delete(r, "Bob"); err != nil || evs != nil {
			t.Errorf("delete of a deleted item: %v, %v; want nothing to do", evs, err)
		}
	}
	// A deleted item cannot be edited, published or archived: a conflict
	// that names it.
	for name, f := range map[string]func() ([]any, error){
		"edit": func() ([]any, error) { return h.item.Edit(m, Content{Name: "c", Values: vals}, Dates{}, nil, "Bob") },
		"edit@rev": func() ([]any, error) {
			cur := int64(2)
			return h.item.Edit(m, Content{Name: "c", Values: vals}, Dates{}, &cur, "Bob")
		},
		"publish":   func() ([]any, error) { return h.item.Publish(t0, t0, "Bob") },
		"unpublish": func() ([]any, error) { return h.item.Unpublish("Bob") },
		"archive":   func() ([]any, error) { return h.item.Archive(t0, "Bob") },
		"unarchive": func() ([]any, error) { return h.item.Unarchive("Bob") },
		"revert":    func() ([]any, error) { return h.item.Revert(m, 0, h.snaps[0], "Bob") },
	} {
		var deleted *DeletedError
		if _, err := f(); !fault.Is(err, fault.Conflict) || !errors.As(err, &deleted) || deleted.ItemID != "i1" {
			t.Errorf("%s of a deleted item: %v, want a conflict naming i1", name, err)
		}
	}
	// Restore, then edits work again.
	evs := h.apply(h.item.Restore(m, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemRestored{"i1", "app1", "m1", "Bob"}}) {
		t.Fatalf("restore %#v", evs)
	}
	if evs, err := h.item.Restore(m, "Bob"); err != nil || evs != nil {
		t.Fatalf("restore of a live item: %v, %v", evs, err)
	}
	if _, err := h.item.Edit(m, Content{Name: "c", Values: vals}, Dates{}, nil, "Bob"); err != nil {
		t.Fatalf("edit after restore: %v", err)
	}
	// A missing item.
	if _, err := (Item{}).Edit(m, Content{Name: "c", Values: vals}, Dates{}, nil, "Bob"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("missing item: %v", err)
	}
	if _, err := (Item{}).Restore(m, "Bob"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("restore missing item: %v", err)
	}
}

func TestEditDates(t *testing.T) {
	m := itemModule(t)
	c := Content{Name: "a", Values: map[string]any{"title": "T"}}
	h := newItem(t, m, c, Dates{})
	pub, rem, arc := t0, t0.Add(48*time.Hour), t0.Add(24*time.Hour)

	evs := h.apply(h.item.Edit(m, c, Dates{PublishedAt: pub}, nil, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemPublished{"i1", "app1", "m1", pub, "Bob"}}) {
		t.Fatalf("publish: %#v", evs)
	}
	evs = h.apply(h.item.Edit(m, c, Dates{PublishedAt: pub, RemovedAt: rem}, nil, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemExpirySet{"i1", "app1", "m1", rem, "Bob"}}) {
		t.Fatalf("expiry: %#v", evs)
	}
	evs = h.apply(h.item.Edit(m, c, Dates{PublishedAt: pub, RemovedAt: rem, ArchivedAt: arc}, nil, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemArchived{"i1", "app1", "m1", arc, "Bob"}}) {
		t.Fatalf("archive: %#v", evs)
	}
	// The same instants in another time zone are no change.
	loc := time.FixedZone("X", 3*3600)
	if evs, err := h.item.Edit(m, c, Dates{PublishedAt: pub.In(loc), RemovedAt: rem.In(loc), ArchivedAt: arc.In(loc)}, nil, "Bob"); err != nil || len(evs) != 0 {
		t.Fatalf("same dates: %v, %v", types(evs), err)
	}
	evs = h.apply(h.item.Edit(m, c, Dates{}, nil, "Bob"))
	want := []any{ItemUnpublished{"i1", "app1", "m1", "Bob"}, ItemExpirySet{"i1", "app1", "m1", time.Time{}, "Bob"}, ItemUnarchived{"i1", "app1", "m1", "Bob"}}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("clear all: %#v", evs)
	}
	if h.item.Dates != (Dates{}) {
		t.Fatalf("dates %+v", h.item.Dates)
	}
	// Content and dates at once: the edit first, then the dates.
	evs = h.apply(h.item.Edit(m, Content{Name: "b", Values: c.Values}, Dates{PublishedAt: pub, ArchivedAt: arc}, nil, "Bob"))
	if got := types(evs); !reflect.DeepEqual(got, []string{"content.item_edited", "content.item_published", "content.item_archived"}) {
		t.Fatalf("edit with dates: %v", got)
	}
	if !h.item.Dates.PublishedAt.Equal(pub) || !h.item.Dates.ArchivedAt.Equal(arc) || h.item.Revision != 9 {
		t.Fatalf("item %+v", h.item)
	}
	// Expiry not after publication.
	if _, err := h.item.Edit(m, c, Dates{PublishedAt: pub, RemovedAt: pub.Add(-time.Minute)}, nil, "Bob"); !fault.Is(err, fault.Invalid) {
		t.Fatalf("bad dates: %v", err)
	}
}

func TestPublishUnpublishArchive(t *testing.T) {
	m := itemModule(t)
	c := Content{Name: "a", Values: map[string]any{"title": "T"}}
	now := t0

	// Publish clears an expiry that has passed, and keeps a future one.
	h := newItem(t, m, c, Dates{PublishedAt: now.Add(-48 * time.Hour), RemovedAt: now.Add(-time.Hour)})
	if s := h.item.StateAt(now); s != Expired {
		t.Fatalf("state %s", s)
	}
	evs := h.apply(h.item.Publish(now, now, "Bob"))
	want := []any{ItemPublished{"i1", "app1", "m1", now, "Bob"}, ItemExpirySet{"i1", "app1", "m1", time.Time{}, "Bob"}}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("publish expired: %#v", evs)
	}
	if s := h.item.StateAt(now); s != Published {
		t.Fatalf("state after publish %s", s)
	}
	// Expiry exactly now counts as passed.
	h = newItem(t, m, c, Dates{RemovedAt: now})
	evs = h.apply(h.item.Publish(now.Add(-time.Hour), now, "Bob"))
	if got := types(evs); !reflect.DeepEqual(got, []string{"content.item_published", "content.item_expiry_set"}) {
		t.Fatalf("expiry now: %v", got)
	}
	// A future expiry stays.
	h = newItem(t, m, c, Dates{RemovedAt: now.Add(time.Hour)})
	evs = h.apply(h.item.Publish(now, now, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemPublished{"i1", "app1", "m1", now, "Bob"}}) || !h.item.Dates.RemovedAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("future expiry: %#v", evs)
	}
	// Scheduling past the future expiry is refused.
	if _, err := h.item.Publish(now.Add(2*time.Hour), now, "Bob"); !fault.Is(err, fault.Invalid) {
		t.Fatalf("publish after expiry: %v", err)
	}
	// Publishing at the current date again is no change.
	if evs, err := h.item.Publish(now, now.Add(time.Minute), "Bob"); err != nil || len(evs) != 0 {
		t.Fatalf("republish: %v, %v", types(evs), err)
	}
	// A passed archive date is lifted; a future one stays.
	h = newItem(t, m, c, Dates{ArchivedAt: now.Add(-time.Minute)})
	if s := h.item.StateAt(now); s != Archived {
		t.Fatalf("state %s", s)
	}
	evs = h.apply(h.item.Publish(now.Add(time.Hour), now, "Bob"))
	want = []any{ItemPublished{"i1", "app1", "m1", now.Add(time.Hour), "Bob"}, ItemUnarchived{"i1", "app1", "m1", "Bob"}}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("publish archived: %#v", evs)
	}
	if s := h.item.StateAt(now); s != Scheduled {
		t.Fatalf("scheduled state %s", s)
	}
	h = newItem(t, m, c, Dates{ArchivedAt: now.Add(time.Minute)})
	evs = h.apply(h.item.Publish(now, now, "Bob"))
	if got := types(evs); !reflect.DeepEqual(got, []string{"content.item_published"}) {
		t.Fatalf("future archive: %v", got)
	}

	// Unpublish, archive, unarchive.
	evs = h.apply(h.item.Unpublish("Bob"))
	if !reflect.DeepEqual(evs, []any{ItemUnpublished{"i1", "app1", "m1", "Bob"}}) {
		t.Fatalf("unpublish %#v", evs)
	}
	if evs, _ := h.item.Unpublish("Bob"); len(evs) != 0 {
		t.Fatalf("unpublish twice %v", types(evs))
	}
	evs = h.apply(h.item.Archive(now, "Bob"))
	if !reflect.DeepEqual(evs, []any{ItemArchived{"i1", "app1", "m1", now, "Bob"}}) {
		t.Fatalf("archive %#v", evs)
	}
	evs = h.apply(h.item.Unarchive("Bob"))
	if !reflect.DeepEqual(evs, []any{ItemUnarchived{"i1", "app1", "m1", "Bob"}}) {
		t.Fatalf("unarchive %#v", evs)
	}
	if evs, _ := h.item.Unarchive("Bob"); len(evs) != 0 {
		t.Fatalf("unarchive twice %v", types(evs))
	}
	if _, err := (Item{}).Publish(now, now, "Bob"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("publish missing: %v", err)
	}
}

func TestStateOf(t *testing.T) {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	for _, c := range []struct {
		name    string
		d       Dates
		deleted bool
		now     time.Time
		want    State
	}{
		{"never published", Dates{}, false, at(0), Concept},
		{"never published, expiry ahead", Dates{RemovedAt: at(1)}, false, at(0), Concept},
		{"scheduled", Dates{PublishedAt: at(1)}, false, at(0), Scheduled},
		{"published at now", Dates{PublishedAt: at(0)}, false, at(0), Published},
		{"published", Dates{PublishedAt: at(-1)}, false, at(0), Published},
		{"published, expiry ahead", Dates{PublishedAt: at(-1), RemovedAt: at(1)}, false, at(0), Published},
		{"published, archive ahead", Dates{PublishedAt: at(-1), ArchivedAt: at(1)}, false, at(0), Published},
		{"expired at now", Dates{PublishedAt: at(-1), RemovedAt: at(0)}, false, at(0), Expired},
		{"expired", Dates{PublishedAt: at(-2), RemovedAt: at(-1)}, false, at(0), Expired},
		{"expired concept", Dates{RemovedAt: at(-1)}, false, at(0), Expired},
		{"expired before scheduled start", Dates{PublishedAt: at(5), RemovedAt: at(-1)}, false, at(0), Expired},
		{"archived at now", Dates{PublishedAt: at(-1), ArchivedAt: at(0)}, false, at(0), Archived},
		{"archived wins over expired", Dates{PublishedAt: at(-3), RemovedAt: at(-2), ArchivedAt: at(-1)}, false, at(0), Archived},
		{"archived concept", Dates{ArchivedAt: at(-1)}, false, at(0), Archived},
		{"deleted wins", Dates{PublishedAt: at(-1)}, true, at(0), Deleted},
		{"deleted concept", Dates{}, true, at(0), Deleted},
		{"later: scheduled becomes published", Dates{PublishedAt: at(1), RemovedAt: at(3)}, false, at(2), Published},
		{"later still: expired", Dates{PublishedAt: at(1), RemovedAt: at(3)}, false, at(4), Expired},
		{"one nanosecond before", Dates{PublishedAt: at(1)}, false, at(1).Add(-1), Scheduled},
	} {
		if got := StateOf(c.d, c.deleted, c.now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		i := Item{Dates: c.d, Deleted: c.deleted}
		if got := i.StateAt(c.now); got != c.want {
			t.Errorf("%s: StateAt %s, want %s", c.name, got, c.want)
		}
	}
}

func TestRevert(t *testing.T) {
	m := itemModule(t)
	h := newItem(t, m, Content{Name: "v0", Values: map[string]any{"title": "T0", "count": json.Number("0")}}, Dates{})
	h.apply(h.item.Edit(m, Content{Name: "v1", Values: map[string]any{"title": "T1"}, Tags: []Tag{{ID: "t-red"}}}, Dates{}, nil, "Bob"))
	h.apply(h.item.Publish(t0, t0, "Bob"))
	if h.item.Revision != 2 {
		t.Fatalf("revision %d", h.item.Revision)
	}

	evs := h.apply(h.item.Revert(m, 0, h.snaps[0], "Cy"))
	if len(evs) != 1 {
		t.Fatalf("revert events %v", types(evs))
	}
	r, ok := evs[0].(ItemReverted)
	if !ok || r.ToRevision != 0 || r.Name != "v0" || r.Values["title"] != "T0" || r.Values["count"] != json.Number("0") ||
		len(r.Tags) != 0 || r.By != "Cy" || r.ItemID != "i1" || r.Module != "m1" || r.App != "app1" {
		t.Fatalf("reverted %#v", evs[0])
	}
	if h.item.Content.Name != "v0" || h.item.Revision != 3 || !h.item.Dates.PublishedAt.Equal(t0) {
		t.Fatalf("item after revert %+v", h.item)
	}

	// Bounds: 0 ≤ toRevision < Revision.
	for _, bad := range []int64{-1, 3, 4} {
		if _, err := h.item.Revert(m, bad, h.snaps[0], "Cy"); !fault.Is(err, fault.Invalid) {
			t.Errorf("revert to %d: %v", bad, err)
		}
	}
	// Reverting to a revision with the current content is no change.
	if evs, err := h.item.Revert(m, 0, h.snaps[0], "Cy"); err != nil || evs != nil {
		t.Fatalf("no-op revert: %v, %v", types(evs), err)
	}
	// Revision 2 only changed dates: its content is the one of revision 1.
	evs = h.apply(h.item.Revert(m, 2, h.snaps[2], "Cy"))
	if len(evs) != 1 || evs[0].(ItemReverted).Name != "v1" || evs[0].(ItemReverted).ToRevision != 2 {
		t.Fatalf("revert to 2: %#v", evs)
	}
	// An old content that no longer fits the module's fields is refused.
	m2 := fold(m, mustEvents(t)(m.Change(ModuleSpec{Name: "Posts", Tags: m.Tags, Fields: []Field{m.Fields[0]}}, "Ann")))
	_, err := h.item.Revert(m2, 0, h.snaps[0], "Cy")
	var fe *fault.Error
	if !fault.Is(err, fault.Invalid) || !errors.As(err, &fe) || fe.Extra["field"] == nil || fe.Extra["error"] == nil || fe.Extra["rule"] == nil {
		t.Fatalf("revert to content with a removed field: %v, want a 400 naming the field, the error and the rule", err)
	}
	// A missing item.
	if _, err := (Item{}).Revert(m, 0, Item{}, "Cy"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestRevisionCountsEvents(t *testing.T) {
	m := itemModule(t)
	h := newItem(t, m, Content{Name: "a", Values: map[string]any{"title": "T"}}, Dates{})
	if h.item.Revision != 0 {
		t.Fatalf("revision after create %d", h.item.Revision)
	}
	steps := []func() ([]any, error){
		func() ([]any, error) {
			return h.item.Edit(m, Content{Name: "b", Values: map[string]any{"title": "T"}}, Dates{}, nil, "x")
		},
		func() ([]any, error) { return h.item.Publish(t0, t0, "x") },
		func() ([]any, error) {
			return h.item.Edit(m, Content{Name: "c", Values: map[string]any{"title": "U"}}, Dates{PublishedAt: t0.Add(time.Hour), RemovedAt: t0.Add(2 * time.Hour)}, nil, "x")
		},
		func() ([]any, error) { return h.item.Archive(t0, "x") },
		func() ([]any, error) { return h.item.Unarchive("x") },
		func() ([]any, error) { return h.item.Unpublish("x") },
		func() ([]any, error) { return h.item.Delete(nil, "x") },
		func() ([]any, error) { return h.item.Restore(m, "x") },
		func() ([]any, error) { return h.item.Revert(m, 0, h.snaps[0], "x") },
	}
	total := int64(0)
	for i, step := range steps {
		evs := h.apply(step())
		if len(evs) == 0 {
			t.Fatalf("step %d made no event", i)
		}
		total += int64(len(evs))
		if h.item.Revision != total {
			t.Fatalf("step %d: revision %d, want %d", i, h.item.Revision, total)
		}
	}
	if total != 11 {
		t.Fatalf("%d events, want 11", total)
	}
	// Every event counts, even one the item does not know.
	if got := h.item.Apply(struct{}{}).Revision; got != total+1 {
		t.Fatalf("unknown event: revision %d", got)
	}
	// Snapshots are the states at each revision.
	for r, s := range h.snaps {
		if s.Revision != int64(r) {
			t.Fatalf("snapshot %d has revision %d", r, s.Revision)
		}
	}
}

// Name, external id and tags cannot hold a NUL character either.
func TestCreateItemRefusesNUL(t *testing.T) {
	m := itemModule(t)
	vals := map[string]any{"title": "T"}
	for field, c := range map[string]Content{
		"name":       {Name: "a\u0000", Values: vals},
		"externalId": {Name: "x", Values: vals, ExternalID: "e\u0000"},
		"tags":       {Name: "x", Values: vals, Tags: []Tag{{Name: "color", Value: "red\u0000"}}},
	} {
		_, err := CreateItem(Item{}, "i1", m, c, Dates{}, "Ann")
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Invalid || fe.Extra["field"] != field {
			t.Errorf("%s with a NUL: %v, want a 400 naming the field", field, err)
		}
	}
}

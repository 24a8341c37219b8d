package content_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// TestItemPlaces: the app and module of each existing item named, deleted
// ones too; unknown ids are left out.
func TestItemPlaces(t *testing.T) {
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"))
	f.module(t0, "m2", "a2", field("title", "01"))
	f.item(t0+1, "i1", "a1", "m1", "One", nil, t0)
	f.item(t0+2, "i2", "a2", "m2", "Two", nil, 0)
	f.apply(t0+3, content.ItemDeleted{ItemID: "i2", App: "a2", Module: "m2", By: "Ann"})

	got, err := f.store.ItemPlaces(f.ctx, []string{"i2", "i1", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b rmcontent.ItemPlace) int { return strings.Compare(a.ID, b.ID) })
	want := []rmcontent.ItemPlace{{ID: "i1", App: "a1", Module: "m1"}, {ID: "i2", App: "a2", Module: "m2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ItemPlaces = %+v, want %+v", got, want)
	}
	if got, err := f.store.ItemPlaces(f.ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("ItemPlaces(nil) = %+v, %v; want none", got, err)
	}
}

// TestItemsAsStored: the items named, with their values as stored (the
// JSON object the projection wrote, numbers as written) and nothing
// decoded; unknown ids are left out.
func TestItemsAsStored(t *testing.T) {
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"), field("n", "02"))
	f.item(t0+1, "i1", "a1", "m1", "One", map[string]any{"title": "One", "n": json.Number("12345678901234567890.50")}, t0)
	f.item(t0+2, "i2", "a1", "m1", "Two", nil, 0)

	got, err := f.store.Items(f.ctx, []string{"i2", "i1", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b rmcontent.Item) int { return strings.Compare(a.ID, b.ID) })
	if len(got) != 2 || got[0].ID != "i1" || got[1].ID != "i2" || got[0].Name != "One" {
		t.Fatalf("Items = %+v, want i1 and i2", got)
	}
	for _, it := range got {
		if it.Values != nil {
			t.Errorf("item %s: values decoded (%v)", it.ID, it.Values)
		}
	}
	if v := string(got[0].RawValues); v != `{"n": 12345678901234567890.50, "title": "One"}` {
		t.Errorf("item i1: values %s", v)
	}
	if v := string(got[1].RawValues); v != `{}` {
		t.Errorf("item i2: values %s", v)
	}
}

package content_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/content"
	rc "github.com/halocms/halocms/readmodels/content"
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
	slices.SortFunc(got, func(a, b rc.ItemPlace) int { return strings.Compare(a.ID, b.ID) })
	want := []rc.ItemPlace{{ID: "i1", App: "a1", Module: "m1"}, {ID: "i2", App: "a2", Module: "m2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("ItemPlaces = %+v, want %+v", got, want)
	}
	if got, err := f.store.ItemPlaces(f.ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("ItemPlaces(nil) = %+v, %v; want none", got, err)
	}
}

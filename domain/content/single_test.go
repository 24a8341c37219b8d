package content

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestSingleItemClaimAndRelease(t *testing.T) {
	m := newModule(t, ModuleSpec{Name: "Settings", Single: true})
	var s SingleItem
	if s.Holder() != "" {
		t.Fatalf("a new reservation is held by %q", s.Holder())
	}
	evs, err := s.Claim(m, "i1", false)
	if err != nil || !reflect.DeepEqual(evs, []any{SingleItemClaimed{ModuleID: "m1", ItemID: "i1"}}) {
		t.Fatalf("first claim: %v %v", evs, err)
	}
	s = fold(s, evs)
	if s.Holder() != "i1" {
		t.Fatalf("holder %q after the claim", s.Holder())
	}

	// A live holder blocks another item, with a 409 naming the module.
	_, err = s.Claim(m, "i2", true)
	var f *fault.Error
	if !fault.Is(err, fault.Conflict) || !errors.As(err, &f) || f.Extra["module"] != "m1" || f.Extra["item"] != nil || strings.Contains(err.Error(), "i1") {
		t.Fatalf("claim while i1 holds it: %v", err)
	}
	// A holder that is no longer live is released first.
	evs, err = s.Claim(m, "i2", false)
	want := []any{SingleItemReleased{ModuleID: "m1", ItemID: "i1"}, SingleItemClaimed{ModuleID: "m1", ItemID: "i2"}}
	if err != nil || !reflect.DeepEqual(evs, want) {
		t.Fatalf("claim over a deleted holder: %v %v", evs, err)
	}
	// The holder claiming again is recorded (it orders a restore).
	if evs, err := s.Claim(m, "i1", true); err != nil || len(evs) != 1 {
		t.Fatalf("re-claim by the holder: %v %v", evs, err)
	}

	// Only the holder releases.
	if evs := s.Release(m, "i2"); evs != nil {
		t.Fatalf("release by another item: %v", evs)
	}
	evs = s.Release(m, "i1")
	if !reflect.DeepEqual(evs, []any{SingleItemReleased{ModuleID: "m1", ItemID: "i1"}}) {
		t.Fatalf("release: %v", evs)
	}
	s = fold(s, evs)
	if s.Holder() != "" || s.Release(m, "i1") != nil {
		t.Fatalf("after the release: holder %q", s.Holder())
	}
	// A stale release (of an item that no longer holds it) changes nothing.
	s = fold(s, []any{SingleItemClaimed{ModuleID: "m1", ItemID: "i3"}, SingleItemReleased{ModuleID: "m1", ItemID: "i1"}})
	if s.Holder() != "i3" {
		t.Fatalf("a stale release freed the module: holder %q", s.Holder())
	}
}

func TestSingleItemConfigure(t *testing.T) {
	plain := newModule(t, ModuleSpec{Name: "Plain"})
	single := newModule(t, ModuleSpec{Name: "Single", Single: true})
	claimed := SingleItem{item: "i1"}
	rel := func(id string) any { return SingleItemReleased{ModuleID: "m1", ItemID: id} }
	cl := func(id string) any { return SingleItemClaimed{ModuleID: "m1", ItemID: id} }
	cases := []struct {
		name   string
		s      SingleItem
		m      Module
		single bool
		live   []string
		want   []any
	}{
		{"on, no items", SingleItem{}, plain, true, nil, nil},
		{"on, one item", SingleItem{}, plain, true, []string{"i1"}, []any{cl("i1")}},
		{"on, one item that holds it already", claimed, plain, true, []string{"i1"}, nil},
		{"on, one item, a deleted one holds it", claimed, plain, true, []string{"i2"}, []any{rel("i1"), cl("i2")}},
		{"on, no items, a deleted one holds it", claimed, plain, true, nil, []any{rel("i1")}},
		{"off, claimed", claimed, single, false, []string{"i1"}, []any{rel("i1")}},
		{"off, free", SingleItem{}, single, false, nil, nil},
	}
	for _, c := range cases {
		evs, err := c.s.Configure(c.m, c.single, c.live)
		if err != nil || !reflect.DeepEqual(evs, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, evs, err, c.want)
		}
	}

	// More than one live item: refused, listing them (up to 100) and their count.
	var live []string
	for i := range 120 {
		live = append(live, fmt.Sprintf("i%d", i))
	}
	for _, n := range []int{2, 120} {
		_, err := SingleItem{}.Configure(plain, true, live[:n])
		var f *fault.Error
		if !fault.Is(err, fault.Conflict) || !errors.As(err, &f) {
			t.Fatalf("%d items: %v", n, err)
		}
		list, _ := f.Extra["affectedItems"].([]map[string]any)
		if len(list) != min(n, 100) || list[0]["id"] != "i0" || f.Extra["affectedCount"] != n || f.Extra["field"] != "isSingle" {
			t.Errorf("%d items: extra %v", n, f.Extra)
		}
	}
}

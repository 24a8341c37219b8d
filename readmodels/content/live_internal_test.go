package content

import (
	"testing"
	"time"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
)

// ChangeOf tells item and module changes, with the revision after them,
// and nothing of the bookkeeping events.
func TestChangeOf(t *testing.T) {
	at := time.UnixMilli(1795900512949)
	rec := func(data any, version int64, actor string) event.Recorded {
		return event.Recorded{Position: event.Position{TxID: 7, Pos: 42}, StreamVersion: version, Data: data, RecordedAt: at,
			Meta: event.Metadata{Actor: actor}}
	}
	for _, c := range []struct {
		data    any
		version int64
		want    Change
		ok      bool
	}{
		{content.ItemEdited{ItemID: "i", App: "a", Module: "m", By: "Ann"}, 4,
			Change{Pos: 42, Kind: ChangedItem, Type: "content.item_edited", App: "a", Module: "m", Item: "i", Revision: 3, At: at, By: "Ann"}, true},
		{content.ItemReverted{ItemID: "i", App: "a", Module: "m"}, 6,
			Change{Pos: 42, Kind: ChangedItem, Type: "content.item_reverted", App: "a", Module: "m", Item: "i", Revision: 5, At: at, By: "user:u1"}, true},
		{content.ModuleCreated{ModuleID: "m", App: "a", By: "Bo"}, 1,
			Change{Pos: 42, Kind: ChangedModule, Type: "content.module_created", App: "a", Module: "m", Revision: 0, At: at, By: "Bo"}, true},
		{content.ModuleNameClaimed{App: "a", Name: "n", ModuleID: "m"}, 1, Change{}, false},
		{content.ModuleTypeSaved{TypeID: "t"}, 1, Change{}, false},
	} {
		got, ok := ChangeOf(rec(c.data, c.version, "user:u1"))
		if ok != c.ok || got != c.want {
			t.Errorf("%T: %+v %v, want %+v %v", c.data, got, ok, c.want, c.ok)
		}
	}
}

// A scope of modules and items shows their changes, and the changes of the
// modules of its items, nothing else.
func TestLiveScopeSees(t *testing.T) {
	sc := liveScope{modules: idSet([]string{"m1"}), items: idSet([]string{"i2"}), itemModules: idSet([]string{"m2"})}
	for _, c := range []struct {
		c    Change
		want bool
	}{
		{Change{Kind: ChangedItem, Module: "m1", Item: "i1"}, true},
		{Change{Kind: ChangedModule, Module: "m1"}, true},
		{Change{Kind: ChangedItem, Module: "m2", Item: "i2"}, true},
		{Change{Kind: ChangedItem, Module: "m2", Item: "i3"}, false},
		{Change{Kind: ChangedModule, Module: "m2"}, true},
		{Change{Kind: ChangedModule, Module: "m3"}, false},
	} {
		if got := sc.sees(c.c); got != c.want {
			t.Errorf("sees %+v: %v", c.c, got)
		}
	}
	if !(liveScope{all: true}).sees(Change{Kind: ChangedItem, Module: "x", Item: "y"}) {
		t.Error("all does not see everything")
	}
}

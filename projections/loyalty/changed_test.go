package loyalty_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
)

// Every loyalty event type is accounted for by Changed: an event about an
// account names it, a definition's change or retirement changes all, and a
// new definition (no account holds a card of it yet) changes nothing. A
// new event type fails here until Changed knows it.
func TestChangedNamesEveryAccountEvent(t *testing.T) {
	for _, e := range loyalty.Events() {
		v := reflect.New(reflect.TypeOf(e)).Elem()
		f := v.FieldByName("Account")
		if f.IsValid() {
			f.SetString("acc-1")
		}
		keys, all := projloyalty.Projector{}.Changed([]event.Recorded{{Type: e.EventType(), Data: v.Interface()}})
		switch {
		case f.IsValid():
			if all || !slices.Equal(keys, []string{"acc-1"}) {
				t.Errorf("%s: keys %v, all %v; want its account", e.EventType(), keys, all)
			}
		case e.EventType() == (loyalty.CardDefined{}).EventType():
			if all || len(keys) > 0 {
				t.Errorf("%s: keys %v, all %v; want nothing", e.EventType(), keys, all)
			}
		default:
			if !all {
				t.Errorf("%s is about no account: keys %v; want all", e.EventType(), keys)
			}
		}
	}
	// Each account once, in the batch's order.
	batch := []event.Recorded{
		{Data: loyalty.PointsEarned{Account: "b"}}, {Data: loyalty.PointsRedeemed{Account: "a"}},
		{Data: loyalty.StampsAdded{Account: "b"}}, {Data: loyalty.CardDefined{Card: "c"}},
	}
	if keys, all := (projloyalty.Projector{}).Changed(batch); all || !slices.Equal(keys, []string{"b", "a"}) {
		t.Errorf("keys %v, all %v; want [b a]", keys, all)
	}
}

package content

import "github.com/halocms/halocms/domain/fault"

// SingleItem is the reservation of a single-item module's one item, rebuilt
// from its stream (SingleItemStream): the item that holds it, or none.
//
// The item that claimed it holds it until it is deleted (it releases it in
// the same append), until another item takes over from a holder that is no
// longer live, or until the module stops being a single-item module.
type SingleItem struct {
	item string // "" when free
}

// Apply folds one event into the reservation.
func (s SingleItem) Apply(ev any) SingleItem {
	switch e := ev.(type) {
	case SingleItemClaimed:
		s.item = e.ItemID
	case SingleItemReleased:
		if e.ItemID == s.item {
			s.item = ""
		}
	}
	return s
}

// Holder is the item holding the reservation, "" when it is free.
func (s SingleItem) Holder() string { return s.item }

// maxListed bounds the lists of items (and tags) a refused module change
// reports (the single-item flag, the allowed tags).
const maxListed = 100

// Claim decides that item takes module m's reservation (creation or
// restore of the item). holderLive tells whether the current holder, when
// it is another item, is live: a holder that was deleted without releasing
// the module (before releases were recorded, or while the flag was being
// turned on) does not block, it is released first. A live other holder is
// a 409 naming the module (not the item: the caller needs write on the
// module, not read on that item). A claim by the holder itself is
// recorded again: appended with the stream's version, it is what orders a
// restore against a concurrent creation.
func (s SingleItem) Claim(m Module, item string, holderLive bool) ([]any, error) {
	var evs []any
	if s.item != "" && s.item != item {
		if holderLive {
			return nil, fault.Conflictf("module %s holds a single item, and it has one", m.Name).
				With("field", "module").With("module", m.ID)
		}
		evs = append(evs, SingleItemReleased{ModuleID: m.ID, ItemID: s.item})
	}
	return append(evs, SingleItemClaimed{ModuleID: m.ID, ItemID: item}), nil
}

// Release decides that item, being deleted, frees module m's reservation;
// nothing when item does not hold it.
func (s SingleItem) Release(m Module, item string) []any {
	if s.item == "" || s.item != item {
		return nil
	}
	return []any{SingleItemReleased{ModuleID: m.ID, ItemID: item}}
}

// Configure decides what becomes of the reservation when module m's
// single-item flag changes to single (the caller calls it only then: it
// reads the items only then), given the ids of the module's live (not
// deleted) items.
//
// Turning the flag on is refused while the module holds more than one live
// item: a 409 whose extra lists them (affectedItems, up to 100, and
// affectedCount). With exactly one, that item claims the module; with
// none, the module is left free. Turning the flag off releases any claim,
// so that turning it on again starts from the items of that moment.
func (s SingleItem) Configure(m Module, single bool, live []string) ([]any, error) {
	var evs []any
	if single && len(live) > 1 {
		list := make([]map[string]any, 0, min(len(live), maxListed))
		for _, id := range live[:min(len(live), maxListed)] {
			list = append(list, map[string]any{"id": id})
		}
		return nil, fault.Conflictf("module %s holds %d items; it can become a single-item module once all but one are deleted",
			m.Name, len(live)).With("field", "isSingle").With("affectedItems", list).With("affectedCount", len(live))
	}
	keep := ""
	if single && len(live) == 1 {
		keep = live[0]
	}
	if s.item == keep {
		return nil, nil
	}
	if s.item != "" {
		evs = append(evs, SingleItemReleased{ModuleID: m.ID, ItemID: s.item})
	}
	if keep != "" {
		evs = append(evs, SingleItemClaimed{ModuleID: m.ID, ItemID: keep})
	}
	return evs, nil
}

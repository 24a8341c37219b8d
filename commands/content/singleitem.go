package content

import (
	"context"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
)

func applySingle(r content.SingleItem, ev any) content.SingleItem { return r.Apply(ev) }

// loadSingle returns single-item module m's reservation with its stream
// version.
func (s *Service) loadSingle(ctx context.Context, m content.Module) (content.SingleItem, int64, error) {
	return commands.Load(ctx, s.store, content.SingleItemStream(m.ID), content.SingleItem{}, applySingle)
}

// claimAppend decides that item claims single-item module m (its creation
// or restore) and returns the append to the reservation's stream, expected
// at the version read: a concurrent claim or release makes the caller's
// whole append fail and decide again. A holder that is no longer live (see
// SingleItem.Claim) does not block.
func (s *Service) claimAppend(ctx context.Context, m content.Module, item string) (event.StreamAppend, error) {
	r, v, err := s.loadSingle(ctx, m)
	if err != nil {
		return event.StreamAppend{}, err
	}
	live := false
	if h := r.Holder(); h != "" && h != item {
		i, _, err := commands.Load(ctx, s.store, content.ItemStream(h), content.Item{}, applyItem)
		if err != nil {
			return event.StreamAppend{}, err
		}
		live = i.Exists() && !i.Deleted
	}
	evs, err := r.Claim(m, item, live)
	if err != nil {
		return event.StreamAppend{}, err
	}
	return event.StreamAppend{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
		Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}, nil
}

// singleAppends are the changes to single-item module m's reservation that
// go with events of item: its deletion releases the module, its restore
// claims it (refused while another live item holds it).
func (s *Service) singleAppends(ctx context.Context, m content.Module, item string, evs []any) ([]event.StreamAppend, error) {
	for _, e := range evs {
		switch e.(type) {
		case content.ItemDeleted:
			r, v, err := s.loadSingle(ctx, m)
			if err != nil {
				return nil, err
			}
			if rel := r.Release(m, item); len(rel) > 0 {
				return []event.StreamAppend{{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
					Events: commands.WithApp(commands.Wrap(ctx, rel...), m.App)}}, nil
			}
		case content.ItemRestored:
			claim, err := s.claimAppend(ctx, m, item)
			if err != nil {
				return nil, err
			}
			return []event.StreamAppend{claim}, nil
		}
	}
	return nil, nil
}

// configureSingle decides what turning module m's single-item flag to
// single does to its reservation (see SingleItem.Configure): turning it on
// is refused while the module holds more than one live item, and claims
// the module for its one item; turning it off releases the module. The
// items are counted in the read model once it has caught up.
func (s *Service) configureSingle(ctx context.Context, m content.Module, single bool) ([]event.StreamAppend, error) {
	var live []string
	if single {
		if err := s.caughtUp(ctx); err != nil {
			return nil, err
		}
		var err error
		if live, err = s.items.ModuleItemIDs(ctx, m.ID); err != nil {
			return nil, err
		}
	}
	r, v, err := s.loadSingle(ctx, m)
	if err != nil {
		return nil, err
	}
	evs, err := r.Configure(m, single, live)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	return []event.StreamAppend{{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
		Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}}, nil
}

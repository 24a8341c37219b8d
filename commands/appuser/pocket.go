package appuser

import (
	"context"
	"maps"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
)

func applyPocket(p appuser.Pocket, ev any) appuser.Pocket { return p.Apply(ev) }

// PutPocket changes the caller's pocket (see appuser.Pocket.Change) and
// returns it as stored.
func (s *Service) PutPocket(ctx context.Context, c appuser.PocketChange) (appuser.Pocket, error) {
	id, app, err := appuser.PocketOwner(access.From(ctx))
	if err != nil {
		return appuser.Pocket{}, err
	}
	p, res, err := commands.Change(ctx, s.store, appuser.PocketStream(id), appuser.Pocket{}, applyPocket,
		func(appuser.Pocket) string { return app },
		func(p appuser.Pocket) ([]any, error) { return p.Change(id, app, c) })
	if err != nil {
		return p, conflict(err)
	}
	s.settle(ctx, res.Last)
	return complete(p), nil
}

// complete gives a pocket empty data and references rather than none.
func complete(p appuser.Pocket) appuser.Pocket {
	if p.Data == nil {
		p.Data = map[string]any{}
	}
	p.References = maps.Clone(p.References)
	if p.References == nil {
		p.References = map[string][]string{}
	}
	return p
}

package content

import (
	"context"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// Revision is one entry of an item's history.
type Revision struct {
	Revision int64
	Type     string // the event type, e.g. "content.item_edited"
	At       time.Time
	Actor    string // "user:<id>", "app:<id>", "system"
	By       string // display name
	ClientIP string
	Changed  []string // what changed: "name", "values.<field>", "publishedAt", ...
	Item     content.Item
}

// History lists an item's revisions, oldest first, from its stream (read
// right on the item). It is for CMS users: app tokens read published
// content only, and a history shows every draft.
func (s *Service) History(ctx context.Context, id string) ([]Revision, error) {
	if a := access.From(ctx); a.ClientApp() != "" {
		return nil, fault.Forbiddenf("an item's history is for CMS users")
	}
	recs, err := s.store.ReadStream(ctx, content.ItemStream(id), 0)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fault.NotFoundf("Instance not found").With("id", id)
	}
	var i content.Item
	out := make([]Revision, 0, len(recs))
	for _, r := range recs {
		prev := i
		i = i.Apply(r.Data)
		out = append(out, Revision{Revision: i.Revision, Type: r.Type, At: r.RecordedAt, Actor: r.Meta.Actor,
			By: byOf(r.Data), ClientIP: r.Meta.ClientIP, Changed: changed(prev, i, r.Data), Item: i})
	}
	if err := s.authorize(ctx, rights.Read, rights.Resource{App: i.App, Module: i.Module, Item: i.ID}); err != nil {
		return nil, err
	}
	return out, nil
}

func byOf(data any) string {
	if e, ok := data.(content.ItemEvent); ok {
		return e.Author()
	}
	return ""
}

func changed(prev, cur content.Item, data any) []string {
	switch e := data.(type) {
	case content.ItemCreated:
		return []string{"created"}
	case content.ItemEdited:
		return e.Changed
	case content.ItemReverted:
		return prev.Changes(cur.Content)
	}
	var out []string
	if !prev.Dates.PublishedAt.Equal(cur.Dates.PublishedAt) {
		out = append(out, "publishedAt")
	}
	if !prev.Dates.RemovedAt.Equal(cur.Dates.RemovedAt) {
		out = append(out, "removedAt")
	}
	if !prev.Dates.ArchivedAt.Equal(cur.Dates.ArchivedAt) {
		out = append(out, "archivedAt")
	}
	if prev.Deleted != cur.Deleted {
		out = append(out, "deletedAt")
	}
	return out
}

// RevertItem sets an item's content back to an earlier revision (update
// right on it).
func (s *Service) RevertItem(ctx context.Context, id string, revision int64, current *int64) (content.Item, error) {
	i, pos, err := s.itemCommand(ctx, id, rights.Update, func(i content.Item, m content.Module, by string) ([]any, error) {
		if err := i.CheckRevision(current); err != nil {
			return nil, err
		}
		if revision < 0 || revision >= i.Revision {
			return nil, fault.Invalidf("revision must be between 0 and %d", i.Revision-1).With("field", "revision")
		}
		recs, err := s.store.ReadStream(ctx, content.ItemStream(id), 0)
		if err != nil {
			return nil, err
		}
		var old content.Item
		for _, r := range recs[:revision+1] {
			old = old.Apply(r.Data)
		}
		evs, err := i.Revert(m, revision, old, by)
		for _, e := range evs {
			// The relations the revert brings back are checked as an
			// edit's: a related item deleted since is not related again.
			if rv, ok := e.(content.ItemReverted); ok && err == nil {
				err = s.checkRelations(ctx, m, rv.Values, i.Content.Values)
			}
		}
		if err != nil {
			return nil, err
		}
		return evs, nil
	})
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}

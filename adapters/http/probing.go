package httpapi

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// itemRefusedFirst is refusedFirst for a request naming content item id:
// when the item is known, the caller's right p on it decides (someone who
// may do p on it is told what is wrong with the request; anyone else gets
// their refusal, as for an unknown item); otherwise refusedFirst. It costs
// queries on the failure path only.
func (s *server) itemRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	if err == nil || !requestFault(err) {
		return err
	}
	if it, rerr := s.ContentRead.Item(ctx, id); rerr == nil {
		if refused := s.Authorizer.Authorize(ctx, access.From(ctx), p, rights.Resource{App: it.App, Module: it.Module, Item: it.ID}); refused != nil {
			return refused
		}
		return err
	}
	return s.refusedFirst(ctx, p, err)
}

// moduleRefusedFirst is itemRefusedFirst for a request naming module id.
func (s *server) moduleRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	if err == nil || !requestFault(err) {
		return err
	}
	if id == "" {
		return s.refusedFirst(ctx, p, err)
	}
	if m, rerr := s.ContentRead.Module(ctx, id); rerr == nil {
		if refused := s.Authorizer.Authorize(ctx, access.From(ctx), p, rights.Resource{App: m.App, Module: m.ID}); refused != nil {
			return refused
		}
		return err
	}
	return s.refusedFirst(ctx, p, err)
}

// unknownToClients answers an app token (or an identified user) refused
// reading another app's content as if the content did not exist, as HALO
// does; other errors pass as they are.
func unknownToClients(ctx context.Context, err error, notFound error) error {
	if fault.Is(err, fault.Forbidden) && access.From(ctx).ClientApp() != "" {
		return notFound
	}
	return err
}

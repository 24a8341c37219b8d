package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// requestFault reports whether err is the request's own fault: bad input
// (400, 413) or an id that names nothing (404).
func requestFault(err error) bool {
	var mbe *http.MaxBytesError
	return fault.Is(err, fault.Invalid) || fault.Is(err, fault.NotFound) || errors.As(err, &mbe)
}

// refusedFirst puts refusals before a request's own faults: in place of
// err, a request fault, a caller who holds p on no app at all gets their
// 403 (401), so that a caller refused whatever the request holds learns
// nothing from it, not what is wrong with it, not whether an id exists.
// Someone who holds p on some app gets err: which app counts is known
// only once the id is. Other errors pass as they are. It costs a query
// on the failure path only.
func (s *server) refusedFirst(ctx context.Context, p rights.Permission, err error) error {
	return s.refusedFirstIn(ctx, p, err, rights.AppScope)
}

// refusedFirstIn is refusedFirst where a grant of p on a scope of any of
// kinds counts, not only on a whole app: content, where an editor of one
// module may create items in it, is told what is wrong with a request.
func (s *server) refusedFirstIn(ctx context.Context, p rights.Permission, err error, kinds ...rights.ScopeKind) error {
	if err == nil || !requestFault(err) {
		return err
	}
	if refused := s.Authorizer.AuthorizeAnywhere(ctx, access.From(ctx), p, kinds...); refused != nil {
		return refused
	}
	return err
}

// itemRefusedFirst is refusedFirst for a request naming content item id:
// when the item is known, the caller's right p on it decides (someone who
// may do p on it is told what is wrong with the request; anyone else gets
// their refusal, as for an unknown item); otherwise a right p on some
// app, module or item does. It costs queries on the failure path only.
func (s *server) itemRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	return s.knownRefusedFirst(ctx, p, err, rights.CoveringItem, func() (rights.Resource, error) {
		it, err := s.ContentRead.ReadBack(ctx, id)
		return rights.Resource{App: it.App, Module: it.Module, Item: it.ID}, err
	})
}

// moduleRefusedFirst is itemRefusedFirst for a request naming module id
// (or, empty, a module the request does not tell): a right p on some app
// or module counts when the module is not known.
func (s *server) moduleRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	if id == "" {
		return s.refusedFirstIn(ctx, p, err, rights.CoveringModule...)
	}
	return s.knownRefusedFirst(ctx, p, err, rights.CoveringModule, func() (rights.Resource, error) {
		m, err := s.ContentRead.ReadBackModule(ctx, id)
		return rights.Resource{App: m.App, Module: m.ID}, err
	})
}

// knownRefusedFirst is refusedFirstIn where the request names a resource
// that known reads: when it is known, the caller's right p on it decides.
func (s *server) knownRefusedFirst(ctx context.Context, p rights.Permission, err error, kinds []rights.ScopeKind, known func() (rights.Resource, error)) error {
	if err == nil || !requestFault(err) {
		return err
	}
	if res, rerr := known(); rerr == nil {
		if refused := s.Authorizer.Authorize(ctx, access.From(ctx), p, res); refused != nil {
			return refused
		}
		return err
	}
	return s.refusedFirstIn(ctx, p, err, kinds...)
}

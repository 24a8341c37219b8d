package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// RequestFault reports whether err is the request's own fault: bad input
// (400, 413) or an id that names nothing (404).
func RequestFault(err error) bool {
	var mbe *http.MaxBytesError
	return fault.Is(err, fault.Invalid) || fault.Is(err, fault.NotFound) || errors.As(err, &mbe)
}

// RefusedFirst puts refusals before a request's own faults: in place of
// err, a request fault, a caller who holds p on no app at all gets their
// 403 (401), so that a caller refused whatever the request holds learns
// nothing from it, not what is wrong with it, not whether an id exists.
// Someone who holds p on some app gets err: which app counts is known
// only once the id is. Other errors pass as they are. It costs a query
// on the failure path only.
func (k *Kit) RefusedFirst(ctx context.Context, p rights.Permission, err error) error {
	return k.RefusedFirstIn(ctx, p, err, rights.AppScope)
}

// RefusedFirstIn is RefusedFirst where a grant of p on a scope of any of
// kinds counts, not only on a whole app: content, where an editor of one
// module may create items in it, is told what is wrong with a request.
func (k *Kit) RefusedFirstIn(ctx context.Context, p rights.Permission, err error, kinds ...rights.ScopeKind) error {
	if err == nil || !RequestFault(err) {
		return err
	}
	if refused := k.authz.AuthorizeAnywhere(ctx, access.From(ctx), p, kinds...); refused != nil {
		return refused
	}
	return err
}

// KnownRefusedFirst is RefusedFirstIn where the request names a resource
// that known reads: when it is known, the caller's right p on it decides.
func (k *Kit) KnownRefusedFirst(ctx context.Context, p rights.Permission, err error, kinds []rights.ScopeKind, known func() (rights.Resource, error)) error {
	if err == nil || !RequestFault(err) {
		return err
	}
	if res, rerr := known(); rerr == nil {
		if refused := k.authz.Authorize(ctx, access.From(ctx), p, res); refused != nil {
			return refused
		}
		return err
	}
	return k.RefusedFirstIn(ctx, p, err, kinds...)
}

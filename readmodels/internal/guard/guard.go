// Package guard holds the read side's rules of precedence between a
// refusal and the request's own faults, shared by the query services: a
// caller who may read nothing of the kind learns nothing from a request,
// not whether an id exists, not what is wrong with it.
package guard

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// Anywhere tells whether the actor holds a permission on some scope of
// the given kinds, on some app.
type Anywhere interface {
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// RequestFault reports whether err is the request's own fault: bad input
// or an id that names nothing.
func RequestFault(err error) bool {
	return fault.Is(err, fault.Invalid) || fault.Is(err, fault.NotFound)
}

// RefusedFirst puts refusals before a request's own faults: in place of
// err, a request fault, a caller who holds p on no app at all gets their
// 403 (401), so that a caller refused whatever the request holds learns
// nothing from it. Someone who holds p on some app gets err: which app
// counts is known only once the id is. Other errors pass as they are. It
// costs a query on the failure path only.
func RefusedFirst(ctx context.Context, authz Anywhere, p rights.Permission, err error) error {
	return RefusedFirstIn(ctx, authz, p, err, rights.AppScope)
}

// RefusedFirstIn is RefusedFirst where a grant of p on a scope of any of
// kinds counts, not only on a whole app (content, where a reader of one
// module is told what is wrong with a request).
func RefusedFirstIn(ctx context.Context, authz Anywhere, p rights.Permission, err error, kinds ...rights.ScopeKind) error {
	if err == nil || !RequestFault(err) {
		return err
	}
	return Malformed(ctx, authz, p, err, kinds...)
}

// Malformed is RefusedFirstIn for what was wrong with a request as its
// wire gave it (a body that does not decode, one too large, a parameter
// out of range): whatever the error, a caller who holds p on no scope of
// kinds gets their refusal instead.
func Malformed(ctx context.Context, authz Anywhere, p rights.Permission, err error, kinds ...rights.ScopeKind) error {
	if err == nil {
		return nil
	}
	if refused := authz.AuthorizeAnywhere(ctx, access.From(ctx), p, kinds...); refused != nil {
		return refused
	}
	return err
}

// UnknownToClients answers an app token (or an identified user) refused
// reading another app's data as if the data did not exist, as HALO does;
// other errors pass as they are.
func UnknownToClients(ctx context.Context, err error, notFound error) error {
	if fault.Is(err, fault.Forbidden) && access.From(ctx).ClientApp() != "" {
		return notFound
	}
	return err
}

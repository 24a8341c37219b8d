package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// HandlerFunc is an endpoint that returns its failure instead of writing
// it: Kit.Handle writes it, through the one error table.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Authorizer answers the permission questions the handlers ask before a
// command or a query can: whether the caller's refusal comes before what
// is wrong with a request (RefusedFirst).
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	// AuthorizeAnywhere returns nil when actor holds p on some scope of
	// any of kinds, on some app.
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// AppNumbers translates between app ids and apps' numbers (HALO's
// integer appId).
type AppNumbers interface {
	AppNumber(ctx context.Context, app string) (int, error)
	AppByNumber(ctx context.Context, n int) (string, error)
}

// KitDeps are what a Kit needs. All but StoreRefused and StoreUnreachable
// are required.
type KitDeps struct {
	Log        *slog.Logger
	Metrics    *Metrics
	Authorizer Authorizer
	Apps       AppNumbers
	// StoreRefused tells a store's refusal of the data a request gave it
	// (postgres.DataException), answered 400; nil: none is.
	StoreRefused func(error) bool
	// StoreUnreachable tells a store out of reach (postgres.Unreachable),
	// answered 503 with Retry-After and logged as a warning; nil: none is.
	StoreUnreachable func(error) bool
}

// Kit is what the handlers of every context share: the one way a failure
// is answered, the metrics, the precedence of refusals over a request's
// faults, and apps' numbers.
type Kit struct {
	Metrics *Metrics
	log     *slog.Logger
	authz   Authorizer
	apps    AppNumbers
	stores  storeErrors
	numbers sync.Map // app id → number, which never changes once given
}

// NewKit returns a kit.
func NewKit(d KitDeps) *Kit {
	if d.Log == nil || d.Metrics == nil || d.Authorizer == nil || d.Apps == nil {
		panic("httpapi.NewKit: nil dependency")
	}
	return &Kit{log: d.Log, Metrics: d.Metrics, authz: d.Authorizer, apps: d.Apps,
		stores: storeErrors{refused: d.StoreRefused, unreachable: d.StoreUnreachable}}
}

// Handle adapts h to net/http: its failure is written by the one error
// table (see ErrorBody).
func (k *Kit) Handle(h HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			k.Fail(w, r, err)
		}
	}
}

// Fail writes err as the HALO error body of its status.
func (k *Kit) Fail(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, k.log, k.stores, err)
}

// ErrorBody is the HALO error body of err (the per-operation errors of a
// batch, for example).
func (k *Kit) ErrorBody(r *http.Request, err error) ErrorBody {
	return errorBody(r, k.log, k.stores, err)
}

// AppOf resolves an appId a client sent: an app's number (HALO's integer
// appId) or its id.
func (k *Kit) AppOf(ctx context.Context, v any) (string, error) {
	return k.AppOfField(ctx, v, "appId")
}

// AppOfField is AppOf for a body or query field of another name: its
// faults name field.
func (k *Kit) AppOfField(ctx context.Context, v any, field string) (string, error) {
	var raw string
	number := false
	switch x := v.(type) {
	case json.Number:
		raw, number = x.String(), true
	case string:
		raw = x
	}
	if raw == "" {
		return "", fault.Invalidf("%s is required", field).With("field", field)
	}
	n, ok, err := AppNumberOf(raw, number, field)
	if err != nil {
		return "", err
	}
	if !ok {
		return raw, nil
	}
	app, err := k.apps.AppByNumber(ctx, n)
	if fault.Is(err, fault.NotFound) {
		return "", fault.Invalidf("app %d not found", n).With("field", field)
	}
	return app, err
}

// AppParam reads the query parameter app (an app's id or number): ""
// when it is absent (the query service says whether it is required), a
// fault naming the field when it names no app.
func (k *Kit) AppParam(r *http.Request) (string, error) {
	a := r.URL.Query().Get("app")
	if a == "" {
		return "", nil
	}
	return k.AppOfField(r.Context(), a, "app")
}

// AppNumber is app's number (0 when it cannot be read), remembered once
// read.
func (k *Kit) AppNumber(ctx context.Context, app string) int {
	if n, ok := k.numbers.Load(app); ok {
		return n.(int)
	}
	n, err := k.apps.AppNumber(ctx, app)
	if err == nil && n > 0 {
		k.numbers.Store(app, n)
	}
	return n
}

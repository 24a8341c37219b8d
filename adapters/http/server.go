// Package httpapi is the root of the HTTP adapter: the chi router with
// its middleware (client IP, metrics, body bounds, authentication), the
// one table from failures to HALO error bodies, decoding, the token
// endpoints, the probes, the release history's legacy paths and the
// OpenAPI document. Each bounded context has a package of its own below
// (content, loyalty, push, appuser, identity) that registers its routes
// and maps the wire to its commands and queries; it reaches the root
// through a Kit.
package httpapi

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
)

// Sessions issues and checks tokens.
type Sessions interface {
	PasswordGrant(ctx context.Context, username, password string, ip netip.Addr) (cmdsession.Token, error)
	ClientCredentials(ctx context.Context, clientID, secret string, ip netip.Addr) (cmdsession.Token, error)
	Refresh(ctx context.Context, refreshToken, clientID, clientSecret string, ip netip.Addr) (cmdsession.Token, error)
	Authenticate(ctx context.Context, accessToken string, ip netip.Addr) (access.Actor, error)
	// RecoverIdentified: an identified user's expired (not revoked)
	// access token as its app, for the routes of a RecoveringRouter only.
	RecoverIdentified(ctx context.Context, accessToken string, ip netip.Addr) (access.Actor, error)
	Revoke(ctx context.Context, token string) error
}

// Readiness reports whether the server can serve: database reachable and
// projections running. Its error names what is not ready when it is (or
// wraps) a NotReady.
type Readiness interface {
	Ready(ctx context.Context) error
}

// ReadyDetailer is a Readiness with more to say in a ready answer: the
// fields it returns (none when nil) are added to /readyz's 200 body. The
// projections' parked events, say: a projection that goes on past them is
// ready, and /readyz shows them. It must not fail the probe: it returns
// what it could learn.
type ReadyDetailer interface {
	ReadyDetail(ctx context.Context) map[string]any
}

// NotReady is a Readiness failure naming its reason ("database",
// "projections"), which /readyz shows.
type NotReady struct {
	Reason string
	Err    error
	// Detail, if set, is added to /readyz's 503 body (the events the
	// projections fail on, say).
	Detail map[string]any
}

func (e *NotReady) Error() string { return e.Reason + ": " + e.Err.Error() }

func (e *NotReady) Unwrap() error { return e.Err }

// Context is one bounded context's part of the API: the routes it serves
// behind authentication, and the OpenAPI document of them (a YAML
// fragment with paths and components, merged into the whole).
type Context interface {
	Routes(r chi.Router)
	OpenAPI() []byte
}

// PublicRouter is a Context with routes that need no token (legacy paths
// that answer 410 Gone to anyone, for example).
type PublicRouter interface {
	PublicRoutes(r chi.Router)
}

// OptionalAuthRouter is a Context with routes that anyone may call, and
// that tell who calls when a token comes (files served to the public, to
// signed URLs and to tokens): a token given is checked as everywhere.
type OptionalAuthRouter interface {
	OptionalAuthRoutes(r chi.Router)
}

// RecoveringRouter is a Context with routes that, besides every token the
// others accept, take an identified user's expired (not revoked) access
// token as its app's: the identified login, which iOS calls with the
// expired token when it signs in again. Nothing else may accept it.
type RecoveringRouter interface {
	RecoveringRoutes(r chi.Router)
}

// BodyLimiter is a Context that bounds some of its request bodies
// otherwise than Config.MaxBodyBytes: limit for a request to path.
type BodyLimiter interface {
	BodyLimit(path string) (limit int64, ok bool)
}

// Deps are the services the root itself calls. Sessions and Ready are
// required; Web, the CMS front end served under /cms/, is optional, and
// so is Idempotency (without it, Idempotency-Key is ignored but where a
// context handles it itself).
type Deps struct {
	Sessions    Sessions
	Ready       Readiness
	Web         http.Handler
	Idempotency IdempotencyStore
}

// Config is the HTTP-level configuration.
type Config struct {
	// TrustedProxies: X-Forwarded-For is believed only when the connection
	// comes from one of these prefixes.
	TrustedProxies []netip.Prefix
	// MaxBodyBytes bounds request bodies (default 1 MiB), unless a
	// context's BodyLimit says otherwise.
	MaxBodyBytes int64
}

type server struct {
	Deps
	kit      *Kit
	cfg      Config
	limiters []BodyLimiter // the contexts that bound some bodies themselves
	owners   []IdempotencyOwner
	openapi  *openapiDoc
	scrape   http.Handler // the metrics' handler
}

// NewRouter builds the whole HTTP API: the root's own endpoints, then
// each context's routes behind authentication.
func NewRouter(kit *Kit, d Deps, cfg Config, contexts ...Context) http.Handler {
	if kit == nil || d.Sessions == nil || d.Ready == nil {
		panic("httpapi.NewRouter: nil dependency")
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	s := &server{Deps: d, kit: kit, cfg: cfg, openapi: &openapiDoc{contexts: contexts}, scrape: kit.Metrics.Handler()}
	for _, c := range contexts {
		if l, ok := c.(BodyLimiter); ok {
			s.limiters = append(s.limiters, l)
		}
		if o, ok := c.(IdempotencyOwner); ok {
			s.owners = append(s.owners, o)
		}
	}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, s.clientIP, s.metrics, s.limitBody)
	r.Use(middleware.StripSlashes) // every path works with and without a trailing slash

	s.routes(r)
	for _, c := range contexts {
		if p, ok := c.(PublicRouter); ok {
			p.PublicRoutes(r)
		}
	}
	r.Group(func(r chi.Router) {
		r.Use(s.authenticate, s.idempotency)
		for _, c := range contexts {
			c.Routes(r)
		}
	})
	r.Group(func(r chi.Router) {
		r.Use(s.authenticateOptional)
		for _, c := range contexts {
			if o, ok := c.(OptionalAuthRouter); ok {
				o.OptionalAuthRoutes(r)
			}
		}
	})
	r.Group(func(r chi.Router) {
		r.Use(s.authenticateRecovering)
		for _, c := range contexts {
			if rr, ok := c.(RecoveringRouter); ok {
				rr.RecoveringRoutes(r)
			}
		}
	})
	legacy(r)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusNotFound, haloError{Error: ErrorBody{Status: 404, Message: "no such endpoint: " + r.Method + " " + r.URL.Path, Extra: map[string]any{}, Type: "HaloError"}})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusMethodNotAllowed, haloError{Error: ErrorBody{Status: 405, Message: "method " + r.Method + " not allowed on " + r.URL.Path, Extra: map[string]any{}, Type: "HaloError"}})
	})
	return r
}

// routes registers the root's own endpoints, which need no token.
func (s *server) routes(r chi.Router) {
	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Get("/metrics", s.serveMetrics)
	r.Get("/openapi.yaml", s.openapiSpec)
	r.Get("/openapi.json", s.openapiJSONHandler)
	r.Get("/docs", s.openapiPage)
	r.Post("/api/oauth/token", s.kit.Handle(s.token))
	r.Post("/api/oauth/revoke", s.kit.Handle(s.revoke))
	s.cmsSessionRoutes(r)
	if s.Web != nil {
		web := middleware.Compress(5, "text/html", "text/css", "application/javascript", "image/svg+xml", "application/json")(s.Web)
		toCMS := func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/cms/", http.StatusFound) }
		r.Get("/", toCMS)
		r.Get("/admin", toCMS)
		r.Get("/cms", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cms" {
				toCMS(w, r)
				return
			}
			web.ServeHTTP(w, r)
		})
		r.Get("/cms/*", web.ServeHTTP)
		r.Head("/cms/*", web.ServeHTTP)
	}
}

func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) { s.scrape.ServeHTTP(w, r) }

func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) { s.kit.Fail(w, r, err) }

// CustomerID is the one customer this server hosts; HALO sends it on
// every module, field, instance and app user.
const CustomerID = 1

// Ms is t in epoch milliseconds, 0 for the zero time.
func Ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

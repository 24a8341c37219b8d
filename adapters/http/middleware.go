package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

type ipKey struct{}

// clientIP resolves the caller's address: the connection's peer, or, when
// the peer is a trusted proxy, the right-most address of X-Forwarded-For
// that is not itself a trusted proxy. A hop met on that walk that is not
// an address is a 400: the chain cannot be believed, and the address of
// the trusted proxy that passed it on is not the client's either.
func (s *server) clientIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := peerAddr(r.RemoteAddr)
		if s.trusted(ip) {
			var err error
			if ip, err = forwardedClient(ip, r.Header.Values("X-Forwarded-For"), s.trusted); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ipKey{}, ip)))
	})
}

// forwardedClient walks the X-Forwarded-For chain xff (its header lines
// in order) from the right, starting at peer, a trusted proxy: the client
// is the first hop that is not trusted, or the left-most when every one
// is. A hop with a port (1.2.3.4:5678, [::1]:5678, as some balancers
// write it) is its address. A hop reached on the walk that is not an
// address, an empty one included, is a 400; a header that is blank
// throughout counts as absent (the peer is the client).
func forwardedClient(peer netip.Addr, xff []string, trusted func(netip.Addr) bool) (netip.Addr, error) {
	chain := strings.Join(xff, ",")
	if strings.Trim(chain, ", \t") == "" {
		return peer, nil
	}
	hops := strings.Split(chain, ",")
	ip := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := hopAddr(strings.TrimSpace(hops[i]))
		if !ok {
			return netip.Addr{}, fault.Invalidf("X-Forwarded-For from a trusted proxy holds a hop that is not an IP address").With("header", "X-Forwarded-For")
		}
		if ip = a; !trusted(ip) {
			break
		}
	}
	return ip, nil
}

// hopAddr reads one X-Forwarded-For hop: an address, or an address and a
// port.
func hopAddr(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

func (s *server) trusted(ip netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ClientIP returns the address resolved by the client-IP middleware.
func ClientIP(ctx context.Context) netip.Addr {
	ip, _ := ctx.Value(ipKey{}).(netip.Addr)
	return ip
}

// limitBody bounds request bodies: MaxBodyBytes, or what a context's
// BodyLimit says for its path (bulk imports).
func (s *server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.bodyLimit(r.URL.Path))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) bodyLimit(path string) int64 {
	for _, l := range s.limiters {
		if limit, ok := l.BodyLimit(path); ok {
			return limit
		}
	}
	return s.cfg.MaxBodyBytes
}

// bearer takes the token from Authorization (what the SDKs send) or
// Authentication (what HALO's documentation prints), scheme
// case-insensitive.
func bearer(r *http.Request) string {
	for _, h := range []string{"Authorization", "Authentication"} {
		v := strings.TrimSpace(r.Header.Get(h))
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			return strings.TrimSpace(v[7:])
		}
	}
	return ""
}

// authenticate requires a valid token and puts the actor in the context.
// Missing, unknown or expired tokens get 401 (the SDKs re-authenticate
// only on 401); a valid token from a refused address gets 403.
func (s *server) authenticate(next http.Handler) http.Handler {
	return s.authenticator(next, false)
}

// authenticateRecovering is authenticate that also takes an identified
// user's expired (not revoked) token as its app's (RecoveringRouter).
func (s *server) authenticateRecovering(next http.Handler) http.Handler {
	return s.authenticator(next, true)
}

// authenticateOptional is authenticate for a request that may come
// without a token (a public file): without one it goes on as anonymous;
// with one, it is checked as authenticate checks it.
func (s *server) authenticateOptional(next http.Handler) http.Handler {
	auth := s.authenticator(next, false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bearer(r) == "" {
			next.ServeHTTP(w, r)
			return
		}
		auth.ServeHTTP(w, r)
	})
}

func (s *server) authenticator(next http.Handler, recovering bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := bearer(r)
		if tok == "" {
			s.fail(w, r, fault.New(fault.Unauthenticated, "missing bearer token"))
			return
		}
		ip := ClientIP(r.Context())
		check := func(ctx context.Context) (access.Actor, error) {
			a, err := s.Sessions.Authenticate(ctx, tok, ip)
			if recovering && fault.Is(err, fault.Unauthenticated) {
				if ra, rerr := s.Sessions.RecoverIdentified(ctx, tok, ip); rerr == nil {
					return ra, nil
				}
			}
			return a, err
		}
		actor, err := check(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		actor.ClientIP = ip.String()
		actor.CorrelationID = r.Header.Get("X-Request-Id")
		if actor.CorrelationID == "" || len(actor.CorrelationID) > 128 {
			actor.CorrelationID = ids.Generator{}.NewID()
		}
		w.Header().Set("X-Request-Id", actor.CorrelationID)
		ctx := access.WithActor(r.Context(), actor)
		ctx = context.WithValue(ctx, recheckKey{}, func(ctx context.Context) (access.Actor, error) {
			a, err := check(ctx)
			a.ClientIP, a.CorrelationID = actor.ClientIP, actor.CorrelationID
			return a, err
		})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type recheckKey struct{}

// Reauthenticate checks the token of the request in ctx again and returns
// its actor as of now: a long-lived answer (a stream of events) calls it
// now and then, since the token may have expired or been revoked after
// the request began. It fails as authentication does (401), and when ctx
// is not an authenticated request's.
func Reauthenticate(ctx context.Context) (access.Actor, error) {
	f, ok := ctx.Value(recheckKey{}).(func(context.Context) (access.Actor, error))
	if !ok {
		return access.Actor{}, access.ErrUnauthenticated
	}
	return f(ctx)
}

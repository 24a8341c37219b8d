package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/halocms/halocms/domain/fault"
)

// The web CMS keeps its refresh token where script cannot read it: in an
// HttpOnly, SameSite=Strict cookie scoped to these endpoints. The access
// token it answers lives in the page's memory only.
//
// CSRF: the cookie is sent only by same-site requests (SameSite=Strict),
// every request must carry the X-CMS-Session header (a cross-origin page
// cannot add it without a CORS preflight, which this server never grants),
// and an Origin header, when sent, must be this server's.
const (
	sessionCookie = "cms_refresh"
	sessionPath   = "/api/cms/session"
	csrfHeader    = "X-CMS-Session"
)

// cmsSessionResponse is what the session endpoints answer: the access
// token for the page's memory, and when it expires.
type cmsSessionResponse struct {
	AccessToken string `json:"accessToken"`
	ExpiresIn   int64  `json:"expiresIn"` // milliseconds
	TokenType   string `json:"tokenType"`
}

func (s *server) cmsSessionRoutes(r chi.Router) {
	r.Post(sessionPath, s.kit.Handle(s.cmsSignIn))
	r.Post(sessionPath+"/refresh", s.kit.Handle(s.cmsRefresh))
	r.Delete(sessionPath, s.kit.Handle(s.cmsSignOut))
}

// cmsSignIn serves POST /api/cms/session: the password grant, with the
// refresh token set as a cookie instead of answered.
func (s *server) cmsSignIn(w http.ResponseWriter, r *http.Request) error {
	if err := checkCSRF(r); err != nil {
		return err
	}
	var b struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := Decode(r, &b); err != nil {
		return err
	}
	if b.Username == "" || b.Password == "" {
		return fault.Invalidf("username and password are required").With("field", "username")
	}
	tok, err := s.Sessions.PasswordGrant(r.Context(), b.Username, b.Password, ClientIP(r.Context()))
	s.kit.Metrics.Command("cms.session.sign_in", err)
	if err != nil {
		return err
	}
	s.answerSession(w, r, tok.AccessToken, tok.RefreshToken, tok.ExpiresIn)
	return nil
}

// cmsRefresh serves POST /api/cms/session/refresh: the cookie's refresh
// token is spent (rotated) for a new pair. Reusing a spent one revokes
// the whole family, as on the token endpoint.
func (s *server) cmsRefresh(w http.ResponseWriter, r *http.Request) error {
	if err := checkCSRF(r); err != nil {
		return err
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return fault.New(fault.Unauthenticated, "no CMS session: sign in")
	}
	tok, err := s.Sessions.Refresh(r.Context(), c.Value, "", "", ClientIP(r.Context()))
	s.kit.Metrics.Command("cms.session.refresh", err)
	if err != nil {
		if fault.Is(err, fault.Unauthenticated) {
			s.clearSessionCookie(w, r)
		}
		return err
	}
	s.answerSession(w, r, tok.AccessToken, tok.RefreshToken, tok.ExpiresIn)
	return nil
}

// cmsSignOut serves DELETE /api/cms/session: the session's token family
// is revoked and the cookie cleared. Without a session it is a no-op.
func (s *server) cmsSignOut(w http.ResponseWriter, r *http.Request) error {
	if err := checkCSRF(r); err != nil {
		return err
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if err := s.Sessions.Revoke(r.Context(), c.Value); err != nil {
			return err
		}
	}
	s.clearSessionCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *server) answerSession(w http.ResponseWriter, r *http.Request, access, refresh string, expiresIn time.Duration) {
	s.setSessionCookie(w, r, refresh, 0)
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, http.StatusOK, cmsSessionResponse{AccessToken: access, ExpiresIn: expiresIn.Milliseconds(), TokenType: "Bearer"})
}

func (s *server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	s.setSessionCookie(w, r, "", -1)
}

// setSessionCookie sets the refresh cookie (maxAge 0: a session cookie;
// -1: delete it) with the attributes every one of its answers carries.
func (s *server) setSessionCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: value, Path: sessionPath, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureRequest(r), MaxAge: maxAge})
}

// secureRequest: the request came over TLS, to this server or to a
// trusted proxy that says so.
func (s *server) secureRequest(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return s.trusted(peerAddr(r.RemoteAddr)) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// checkCSRF refuses a request that a page of another origin could have
// sent: the custom header must be there and an Origin must be this host.
func checkCSRF(r *http.Request) error {
	if r.Header.Get(csrfHeader) == "" {
		return fault.Forbiddenf("the CMS session endpoints need the %s header", csrfHeader)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return fault.Forbiddenf("cross-origin request refused")
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return fault.Forbiddenf("cross-site request refused")
	}
	return nil
}

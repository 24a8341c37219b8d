package httpapi

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/fault"
)

func kindLabel(err error) string { return strings.ReplaceAll(fault.KindOf(err).String(), " ", "_") }

// tokenRequest holds the fields of every grant, from a form or JSON body.
type tokenRequest struct {
	GrantType    string `json:"grant_type"`
	Username     string `json:"username"`
	Password     string `json:"password"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
}

func readTokenRequest(r *http.Request) (tokenRequest, error) {
	var tr tokenRequest
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			return tr, badJSON(err)
		}
		return tr, nil
	}
	if err := r.ParseForm(); err != nil {
		return tr, formError(err)
	}
	tr = tokenRequest{
		GrantType: r.PostForm.Get("grant_type"), Username: r.PostForm.Get("username"),
		Password: r.PostForm.Get("password"), ClientID: r.PostForm.Get("client_id"),
		ClientSecret: r.PostForm.Get("client_secret"), RefreshToken: r.PostForm.Get("refresh_token"),
	}
	return tr, nil
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"` // milliseconds, as HALO
	Scope        string `json:"scope"`
	TokenType    string `json:"token_type"`
}

// token serves POST /api/oauth/token whatever its query marker (?_user,
// ?_app, ...): the grant_type picks the flow.
func (s *server) token(w http.ResponseWriter, r *http.Request) {
	tr, err := readTokenRequest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ip := ClientIP(r.Context())
	basicUser, basicPass, hasBasic := r.BasicAuth()
	var tok cmdsession.Token
	switch tr.GrantType {
	case "password":
		if hasBasic {
			if tr.Username == "" && tr.Password == "" {
				tr.Username, tr.Password = basicUser, basicPass
			} else if basicUser != tr.Username || basicPass != tr.Password {
				s.fail(w, r, fault.Invalidf("the Basic credentials and the form credentials differ"))
				return
			}
		}
		if tr.Username == "" || tr.Password == "" {
			s.fail(w, r, fault.Invalidf("username and password are required").With("field", "username"))
			return
		}
		tok, err = s.Sessions.PasswordGrant(r.Context(), tr.Username, tr.Password, ip)
	case "client_credentials":
		if hasBasic && tr.ClientID == "" {
			tr.ClientID, tr.ClientSecret = basicUser, basicPass
		}
		if tr.ClientID == "" || tr.ClientSecret == "" {
			s.fail(w, r, fault.Invalidf("client_id and client_secret are required").With("field", "client_id"))
			return
		}
		tok, err = s.Sessions.ClientCredentials(r.Context(), tr.ClientID, tr.ClientSecret, ip)
	case "refresh_token":
		if tr.RefreshToken == "" {
			s.fail(w, r, fault.Invalidf("refresh_token is required").With("field", "refresh_token"))
			return
		}
		if hasBasic && tr.ClientID == "" {
			tr.ClientID, tr.ClientSecret = basicUser, basicPass
		}
		tok, err = s.Sessions.Refresh(r.Context(), tr.RefreshToken, tr.ClientID, tr.ClientSecret, ip)
	case "":
		err = fault.Invalidf("grant_type is required").With("field", "grant_type")
	default:
		err = fault.Invalidf("unsupported grant_type %q (want password, client_credentials or refresh_token)", tr.GrantType).With("field", "grant_type")
	}
	grant := tr.GrantType
	if grant != "password" && grant != "client_credentials" && grant != "refresh_token" {
		grant = "other" // bounded metric labels, whatever clients send
	}
	s.Metrics.Command("token."+grant, err)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, tokenResponse{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		ExpiresIn: tok.ExpiresIn.Milliseconds(), Scope: tok.Scope, TokenType: "Bearer"})
}

// revoke serves POST /api/oauth/revoke (RFC 7009): the token's whole family
// stops working. Unknown tokens are not an error.
func (s *server) revoke(w http.ResponseWriter, r *http.Request) {
	tr := struct {
		Token string `json:"token"`
	}{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			s.fail(w, r, badJSON(err))
			return
		}
	} else {
		if err := r.ParseForm(); err != nil {
			s.fail(w, r, formError(err))
			return
		}
		tr.Token = r.PostForm.Get("token")
	}
	if tr.Token == "" {
		tr.Token = bearer(r)
	}
	if tr.Token == "" {
		s.fail(w, r, fault.Invalidf("token is required").With("field", "token"))
		return
	}
	if err := s.Sessions.Revoke(r.Context(), tr.Token); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"revoked": true})
}

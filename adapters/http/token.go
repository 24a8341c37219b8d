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
			return tr, BadJSON(err)
		}
		return tr, nil
	}
	if err := r.ParseForm(); err != nil {
		return tr, FormError(err)
	}
	tr = tokenRequest{
		GrantType: r.PostForm.Get("grant_type"), Username: r.PostForm.Get("username"),
		Password: r.PostForm.Get("password"), ClientID: r.PostForm.Get("client_id"),
		ClientSecret: r.PostForm.Get("client_secret"), RefreshToken: r.PostForm.Get("refresh_token"),
	}
	return tr, nil
}

// TokenResponse is the answer of the token endpoint (and of an
// identified user's login).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"` // milliseconds, as HALO
	Scope        string `json:"scope"`
	TokenType    string `json:"token_type"`
}

// token serves POST /api/oauth/token whatever its query marker (?_user,
// ?_app, ...): the grant_type picks the flow.
func (s *server) token(w http.ResponseWriter, r *http.Request) error {
	tr, err := readTokenRequest(r)
	if err != nil {
		return err
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
				return fault.Invalidf("the Basic credentials and the form credentials differ")
			}
		}
		if tr.Username == "" || tr.Password == "" {
			return fault.Invalidf("username and password are required").With("field", "username")
		}
		tok, err = s.Sessions.PasswordGrant(r.Context(), tr.Username, tr.Password, ip)
	case "client_credentials":
		if hasBasic && tr.ClientID == "" {
			tr.ClientID, tr.ClientSecret = basicUser, basicPass
		}
		if tr.ClientID == "" || tr.ClientSecret == "" {
			return fault.Invalidf("client_id and client_secret are required").With("field", "client_id")
		}
		tok, err = s.Sessions.ClientCredentials(r.Context(), tr.ClientID, tr.ClientSecret, ip)
	case "refresh_token":
		if tr.RefreshToken == "" {
			return fault.Invalidf("refresh_token is required").With("field", "refresh_token")
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
	s.kit.Metrics.Command("token."+grant, err)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, http.StatusOK, TokenResponse{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		ExpiresIn: tok.ExpiresIn.Milliseconds(), Scope: tok.Scope, TokenType: "Bearer"})
	return nil
}

// revoke serves POST /api/oauth/revoke (RFC 7009): the token's whole family
// stops working. Unknown tokens are not an error.
func (s *server) revoke(w http.ResponseWriter, r *http.Request) error {
	tr := struct {
		Token string `json:"token"`
	}{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			return BadJSON(err)
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return FormError(err)
		}
		tr.Token = r.PostForm.Get("token")
	}
	if tr.Token == "" {
		tr.Token = bearer(r)
	}
	if tr.Token == "" {
		return fault.Invalidf("token is required").With("field", "token")
	}
	if err := s.Sessions.Revoke(r.Context(), tr.Token); err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"revoked": true})
	return nil
}

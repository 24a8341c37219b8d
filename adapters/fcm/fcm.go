// Package fcm sends push notifications through Firebase Cloud Messaging's
// HTTP v1 API, authenticated with a service account (OAuth 2.0 JWT bearer
// grant, via golang.org/x/oauth2/google).
//
// A Sender is safe for concurrent use: it keeps one HTTP client (HTTP/2 or
// keep-alive connections) and one cached access token, refreshed only when
// it expires or FCM refuses it.
package fcm

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/halocms/halocms/adapters/retryafter"
	"github.com/halocms/halocms/domain/push"
)

// DefaultEndpoint is FCM's production API root.
const DefaultEndpoint = "https://fcm.googleapis.com"

// Scope is the OAuth scope FCM's send API requires.
const Scope = "https://www.googleapis.com/auth/firebase.messaging"

// Config of a Sender.
type Config struct {
	// CredentialsJSON is the service account's key file as downloaded
	// from the Firebase console (type service_account). Its token_uri is
	// where access tokens are fetched.
	CredentialsJSON []byte
	// Endpoint is the API root; empty means DefaultEndpoint. Tests point
	// it at a local server.
	Endpoint string
	// HTTPClient sends the messages and fetches the access tokens;
	// nil means a client of our own with pooled connections.
	HTTPClient *http.Client
}

// Sender delivers one message per call to FCM.
type Sender struct {
	client *http.Client
	url    string // {Endpoint}/v1/projects/{project_id}/messages:send
	tokens *tokenCache
}

// New checks the service account key and returns a Sender. It fetches no
// token yet: the first Send does. ctx carries values only (its
// cancellation is ignored, since the Sender outlives it).
func New(ctx context.Context, cfg Config) (*Sender, error) {
	var key struct {
		Type       string `json:"type"`
		ProjectID  string `json:"project_id"`
		PrivateKey string `json:"private_key"`
	}
	if err := json.Unmarshal(cfg.CredentialsJSON, &key); err != nil {
		return nil, fmt.Errorf("fcm: credentials are not JSON: %w", err)
	}
	if key.Type != "service_account" {
		return nil, fmt.Errorf("fcm: credentials type is %q, want service_account", key.Type)
	}
	if key.ProjectID == "" {
		return nil, errors.New("fcm: credentials have no project_id")
	}
	if err := checkRSAKey(key.PrivateKey); err != nil {
		return nil, fmt.Errorf("fcm: credentials private_key: %w", err)
	}
	jwtCfg, err := google.JWTConfigFromJSON(cfg.CredentialsJSON, Scope)
	if err != nil {
		return nil, fmt.Errorf("fcm: %w", err)
	}

	endpoint := strings.TrimRight(cfg.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("fcm: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultClient()
	}
	// The token source fetches with our client, outside any request's
	// lifetime.
	tokenCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, client)
	return &Sender{
		client: client,
		url:    endpoint + "/v1/projects/" + url.PathEscape(key.ProjectID) + "/messages:send",
		tokens: newTokenCache(func() (*oauth2.Token, error) {
			// A fresh source per fetch: the cache decides when to fetch.
			return jwtCfg.TokenSource(tokenCtx).Token()
		}),
	}, nil
}

// checkRSAKey reports whether pemKey holds an RSA private key (PKCS#8, as
// Google issues them, or PKCS#1).
func checkRSAKey(pemKey string) error {
	block, _ := pem.Decode([]byte(pemKey))
	if block == nil {
		return errors.New("not PEM")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if _, ok := k.(*rsa.PrivateKey); !ok {
			return fmt.Errorf("%T is not an RSA key", k)
		}
		return nil
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return errors.New("not a PKCS#8 or PKCS#1 RSA private key")
	}
	return nil
}

// defaultClient pools enough idle connections for many concurrent sends
// (the standard transport keeps only two per host, which would make
// HTTP/1.1 sends dial again and again); HTTP/2 is negotiated over TLS.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// Send delivers m to its device and says what FCM answered. It never
// returns an error: network trouble and a cancelled ctx are Retry.
func (s *Sender) Send(ctx context.Context, m push.Message) push.Result {
	if err := ctx.Err(); err != nil {
		return push.Result{Outcome: push.Retry, Reason: err.Error()}
	}
	body, err := encode(m)
	if err != nil {
		return push.Result{Outcome: push.Failed, Reason: err.Error()}
	}
	tok, err := s.tokens.get(ctx)
	if err != nil {
		return tokenFailure(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return push.Result{Outcome: push.Failed, Reason: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := s.client.Do(req)
	if err != nil {
		return push.Result{Outcome: push.Retry, Reason: err.Error()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return push.Result{Outcome: push.Delivered}
	}
	if err != nil {
		return push.Result{Outcome: push.Retry, Reason: err.Error()}
	}
	res, tokenRefused := classify(resp.StatusCode, resp.Header, raw)
	if tokenRefused {
		s.tokens.invalidate(tok)
	}
	return res
}

// tokenFailure maps a failure to get an access token: the token endpoint
// refusing the service account (4xx other than 429) is Failed, since every
// message would fail alike; anything else is Retry.
func tokenFailure(err error) push.Result {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		code := re.Response.StatusCode
		if code >= 400 && code < 500 && code != http.StatusTooManyRequests {
			reason := re.ErrorCode
			if reason == "" { // the JWT flow leaves the body unparsed
				var body struct {
					Error string `json:"error"`
				}
				_ = json.Unmarshal(re.Body, &body)
				reason = body.Error
			}
			if reason == "" {
				reason = re.Response.Status
			}
			return push.Result{Outcome: push.Failed, Reason: "oauth: " + reason}
		}
	}
	return push.Result{Outcome: push.Retry, Reason: "oauth: " + err.Error()}
}

// errorBody is FCM v1's error response.
type errorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type            string `json:"@type"`
			ErrorCode       string `json:"errorCode"`
			FieldViolations []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"fieldViolations"`
		} `json:"details"`
	} `json:"error"`
}

const fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

// classify maps an FCM error response to a Result; tokenRefused says FCM
// refused our access token (it must be fetched again).
//
//	UNREGISTERED, SENDER_ID_MISMATCH            → InvalidToken
//	INVALID_ARGUMENT about the registration token → InvalidToken
//	INVALID_ARGUMENT otherwise                   → Failed
//	THIRD_PARTY_AUTH_ERROR (APNs credentials)    → Failed
//	QUOTA_EXCEEDED, 429, UNAVAILABLE, INTERNAL, 5xx → Retry (Retry-After)
//	401 (our access token)                       → Retry, token dropped
//	any other status                             → Failed
func classify(status int, h http.Header, raw []byte) (res push.Result, tokenRefused bool) {
	var eb errorBody
	_ = json.Unmarshal(raw, &eb) // a body that is not FCM's JSON leaves eb empty
	e := eb.Error
	code := ""
	aboutToken := strings.Contains(strings.ToLower(e.Message), "registration token")
	for _, d := range e.Details {
		if d.Type == fcmErrorType && d.ErrorCode != "" && d.ErrorCode != "UNSPECIFIED_ERROR" {
			code = d.ErrorCode
		}
		for _, v := range d.FieldViolations {
			if v.Field == "message.token" {
				aboutToken = true
			}
		}
	}
	reason := code
	if reason == "" {
		reason = e.Status
	}
	if reason == "" {
		reason = http.StatusText(status)
	}
	if e.Message != "" {
		reason += ": " + e.Message
	}
	retry := push.Result{Outcome: push.Retry, RetryAfter: retryafter.Parse(h.Get("Retry-After"), time.Now()), Reason: reason}

	switch code {
	case "UNREGISTERED", "SENDER_ID_MISMATCH":
		return push.Result{Outcome: push.InvalidToken, Reason: reason}, false
	case "THIRD_PARTY_AUTH_ERROR":
		return push.Result{Outcome: push.Failed, Reason: reason}, false
	case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL":
		return retry, false
	}
	switch {
	case status == http.StatusBadRequest || code == "INVALID_ARGUMENT":
		if aboutToken {
			return push.Result{Outcome: push.InvalidToken, Reason: reason}, false
		}
		return push.Result{Outcome: push.Failed, Reason: reason}, false
	case status == http.StatusUnauthorized:
		retry.RetryAfter = 0
		return retry, true
	case status == http.StatusTooManyRequests || status >= 500:
		return retry, false
	}
	return push.Result{Outcome: push.Failed, Reason: reason}, false
}

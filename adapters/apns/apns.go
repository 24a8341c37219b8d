// Package apns sends push notifications straight to Apple's Push
// Notification service over HTTP/2, with token-based (ES256 JWT)
// authentication.
//
// A Sender is safe for concurrent use: all sends share one HTTP/2 client
// (many streams on few connections) and one provider token, signed with
// github.com/golang-jwt/jwt/v5 and renewed every 40 minutes.
package apns

import (
	"bytes"
	"context"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/halocms/halocms/adapters/retryafter"
	"github.com/halocms/halocms/domain/push"
)

// DefaultEndpoint is APNs' production API root (the sandbox one is
// https://api.sandbox.push.apple.com).
const DefaultEndpoint = "https://api.push.apple.com"

// Config of a Sender.
type Config struct {
	// KeyP8 is the signing key downloaded from Apple's developer account
	// (a .p8 file: PEM, PKCS#8, EC P-256).
	KeyP8 []byte
	// KeyID is the key's id, TeamID the developer team's id.
	KeyID, TeamID string
	// Topic is the app's bundle id.
	Topic string
	// Endpoint is the API root; empty means DefaultEndpoint.
	Endpoint string
	// HTTPClient sends the messages; it must speak HTTP/2. Nil means a
	// client of our own.
	HTTPClient *http.Client
}

// Sender delivers one message per call to APNs.
type Sender struct {
	client   *http.Client
	endpoint string // {Endpoint}/3/device/
	topic    string
	tokens   *tokenCache
}

// New checks cfg and returns a Sender.
func New(cfg Config) (*Sender, error) {
	key, err := jwt.ParseECPrivateKeyFromPEM(cfg.KeyP8)
	if err != nil {
		return nil, fmt.Errorf("apns: signing key: %w", err)
	}
	if key.Curve != elliptic.P256() {
		return nil, errors.New("apns: signing key is not on curve P-256")
	}
	switch {
	case cfg.KeyID == "":
		return nil, errors.New("apns: no key id")
	case cfg.TeamID == "":
		return nil, errors.New("apns: no team id")
	case cfg.Topic == "":
		return nil, errors.New("apns: no topic (bundle id)")
	}
	endpoint := strings.TrimRight(cfg.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("apns: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultClient()
	}
	return &Sender{
		client:   client,
		endpoint: endpoint + "/3/device/",
		topic:    cfg.Topic,
		tokens:   newTokenCache(key, cfg.KeyID, cfg.TeamID, time.Now),
	}, nil
}

// defaultClient speaks HTTP/2 only (APNs has no HTTP/1.1) and pings idle
// connections, so that a connection Apple dropped silently is noticed
// before a send hangs on it.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP2(true)
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: time.Minute, PingTimeout: 15 * time.Second}
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// Send delivers m to its device and says what APNs answered. It never
// returns an error: network trouble and a cancelled ctx are Retry.
func (s *Sender) Send(ctx context.Context, m push.Message) push.Result {
	if err := ctx.Err(); err != nil {
		return push.Result{Outcome: push.Retry, Reason: err.Error()}
	}
	body, err := encode(m)
	if err != nil {
		return push.Result{Outcome: push.Failed, Reason: err.Error()}
	}
	tok, err := s.tokens.get()
	if err != nil {
		return push.Result{Outcome: push.Failed, Reason: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint+url.PathEscape(m.Device.Token), bytes.NewReader(body))
	if err != nil {
		return push.Result{Outcome: push.Failed, Reason: err.Error()}
	}
	pushType, priority := "alert", "10"
	if m.Notification.Silent {
		pushType, priority = "background", "5" // Apple refuses priority 10 for background pushes
	}
	h := req.Header // HTTP/2 sends the names in lower case
	h.Set("Authorization", "bearer "+tok.jwt)
	h.Set("Apns-Topic", s.topic)
	h.Set("Apns-Push-Type", pushType)
	h.Set("Apns-Priority", priority)
	h.Set("Apns-Expiration", "0")
	h.Set("Content-Type", "application/json")
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
	res, tokenExpired := classify(resp.StatusCode, resp.Header, raw)
	if tokenExpired {
		s.tokens.invalidate(tok)
	}
	return res
}

// classify maps an APNs error response to a Result; tokenExpired says
// Apple refused our provider token as expired (a new one must be signed).
//
//	410 (Unregistered, ExpiredToken)               → InvalidToken
//	400 BadDeviceToken, DeviceTokenNotForTopic     → InvalidToken
//	403 ExpiredProviderToken                       → Retry, token re-signed
//	429, 5xx                                       → Retry (Retry-After if sent)
//	any other status (bad payload, bad key, topic) → Failed
func classify(status int, h http.Header, raw []byte) (res push.Result, tokenExpired bool) {
	var body struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(raw, &body) // a body that is not Apple's JSON leaves no reason
	reason := body.Reason
	if reason == "" {
		reason = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	switch {
	case status == http.StatusGone,
		status == http.StatusBadRequest && (reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic"):
		return push.Result{Outcome: push.InvalidToken, Reason: reason}, false
	case status == http.StatusForbidden && reason == "ExpiredProviderToken":
		return push.Result{Outcome: push.Retry, Reason: reason}, true
	case status == http.StatusTooManyRequests || status >= 500:
		return push.Result{Outcome: push.Retry, RetryAfter: retryafter.Parse(h.Get("Retry-After"), time.Now()), Reason: reason}, false
	}
	return push.Result{Outcome: push.Failed, Reason: reason}, false
}

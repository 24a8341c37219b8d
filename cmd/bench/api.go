package main

// The HTTP client of the server's API, shared by the phases that run
// the server binary: JSON calls, signing in, an app to work in.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// loginRetry is how long token keeps trying to sign in.
const loginRetry = 10 * time.Second

type cmsAPI struct {
	base string
	hc   *http.Client
}

func newCMSAPI(base string, clients int) *cmsAPI {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2*clients + 16,
		MaxIdleConnsPerHost: clients + 16,
		IdleConnTimeout:     90 * time.Second,
	}
	return &cmsAPI{base: base, hc: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}
}

type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// call sends body (nil, url.Values as a form, []byte as JSON, or a value
// to encode as JSON) and decodes the answer into out (nil: drop it;
// *[]byte: the raw body). want is the status expected; 0 takes any 2xx.
func (a *cmsAPI) call(ctx context.Context, method, path, token string, body any, want int, out any) error {
	_, err := a.do(ctx, method, path, token, body, want, out)
	return err
}

// do is call, returning the answer's headers too.
func (a *cmsAPI) do(ctx context.Context, method, path, token string, body any, want int, out any) (http.Header, error) {
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case []byte:
		rd, ctype = bytes.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd, ctype = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if (want == 0 && (resp.StatusCode < 200 || resp.StatusCode > 299)) || (want != 0 && resp.StatusCode != want) {
		return nil, &statusError{method: method, path: path, status: resp.StatusCode, body: snippet(data, 500)}
	}
	switch o := out.(type) {
	case nil:
	case *[]byte:
		*o = data
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("%s %s: decode the answer: %w (%s)", method, path, err, snippet(data, 300))
		}
	}
	return resp.Header, nil
}

func snippet(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// token signs in, retrying for loginRetry: users and apps reach
// the read model asynchronously. The retries back off: past 10 failures
// from one address the server's login throttle makes that account wait.
func (a *cmsAPI) token(ctx context.Context, form url.Values) (string, error) {
	start := time.Now()
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		err := a.call(ctx, http.MethodPost, "/api/oauth/token", "", form, http.StatusOK, &tok)
		if err == nil && tok.AccessToken == "" {
			err = errors.New("token answer without access_token")
		}
		if err == nil {
			if attempt > 1 {
				progressf("content: %s token after %d attempts, %s", form.Get("grant_type"), attempt, time.Since(start).Round(time.Millisecond))
			}
			return tok.AccessToken, nil
		}
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusTooManyRequests {
			return "", fmt.Errorf("locked out by the login throttle after %d attempts: %w", attempt, err)
		}
		if ctx.Err() != nil || time.Since(start)+wait > loginRetry {
			return "", fmt.Errorf("after %d attempts in %s: %w", attempt, time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// benchApp is an app as POST /core-api/app answers it.
type benchApp struct {
	ID           string `json:"id"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// adminApp signs in as the bench's admin and creates an app named name;
// it returns the admin's token and the app.
func (a *cmsAPI) adminApp(ctx context.Context, password, name string) (string, benchApp, error) {
	var app benchApp
	admin, err := a.token(ctx, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {password}})
	if err != nil {
		return "", app, fmt.Errorf("admin sign-in: %w", err)
	}
	if err := a.call(ctx, http.MethodPost, "/core-api/app", admin, map[string]any{"name": name}, 0, &app); err != nil {
		return "", app, fmt.Errorf("create app: %w", err)
	}
	if app.ID == "" || app.ClientID == "" || app.ClientSecret == "" {
		return "", app, fmt.Errorf("create app: answer without id, clientId or clientSecret: %+v", app)
	}
	return admin, app, nil
}

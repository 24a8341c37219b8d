package main

// End-to-end test harness: the whole program (open + serveOn, the same
// composition root `cms serve` uses) on a fresh database, listening on
// port 0, spoken to over real HTTP.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

const (
	adminUser = "admin"
	adminPass = "admin-secret-pw"
	userPass  = "user-secret-pw"
)

// testServer is one running program.
type testServer struct {
	t      testing.TB
	app    *app
	base   string // http://host:port
	client *http.Client
	admin  string // the bootstrap admin's access token
	// adminID is the bootstrap admin's user id.
	adminID string
	cancel  context.CancelFunc
	done    chan error
	dbURL   string
	// openedAt and readyAt time the start: open called, /readyz 200.
	openedAt, readyAt time.Time
	// adminLoginAfterReady is how long the bootstrap admin had to wait
	// after /readyz before the password grant accepted it.
	adminLoginAfterReady time.Duration
	// adminLoginAttempts counts the password grants that took.
	adminLoginAttempts int
}

type serverOption func(*serverSetup)

type serverSetup struct {
	cfg    Config
	listen string // listen address, default 127.0.0.1:0
}

func withTrustedProxies(ps ...string) serverOption {
	return func(s *serverSetup) {
		for _, p := range ps {
			s.cfg.TrustedProxies = append(s.cfg.TrustedProxies, netip.MustParsePrefix(p))
		}
	}
}

func withConfig(f func(*Config)) serverOption { return func(s *serverSetup) { f(&s.cfg) } }

func withListen(addr string) serverOption { return func(s *serverSetup) { s.listen = addr } }

// startServer starts the whole program on a fresh database and waits until
// /readyz answers 200. Cleanup stops it (cancelling the context, as a
// signal would), checks that serveOn returned nil and closes the app.
func startServer(t testing.TB, opts ...serverOption) *testServer {
	t.Helper()
	dbURL := pgtest.URL(t)
	st := serverSetup{
		cfg: Config{
			DatabaseURL:     pgtest.WithParam(dbURL, "pool_max_conns", "10"),
			HTTPAddr:        "127.0.0.1:0",
			AdminUsername:   adminUser,
			AdminPassword:   adminPass,
			BcryptCost:      bcrypt.MinCost,
			AccessTokenTTL:  24 * time.Hour,
			RefreshTokenTTL: 30 * 24 * time.Hour,
			// Generous: every test package shares one PostgreSQL cluster, and
			// a runner sees only events below the cluster-wide snapshot
			// xmin, which any long transaction of a parallel test (in any
			// database) holds back.
			ReadYourWrites: 20 * time.Second,
			SearchCache:    1024,    // as served: every e2e search by an app token goes through the cache
			SearchIndex:    250_000, // as served: searches of one module's typed columns by an app token may be answered in memory
			// Above net/http's 5 s: Shutdown waits that long for a connection
			// that was dialed but never sent a request (a client under load
			// dials spares), so 5 s itself could run out first.
			ShutdownTimeout: 10 * time.Second,
			LogLevel:        "error",
		},
		listen: "127.0.0.1:0",
	}
	for _, o := range opts {
		o(&st)
	}
	ln, err := net.Listen("tcp", st.listen)
	if err != nil {
		t.Fatalf("listen %s: %v", st.listen, err)
	}
	if st.cfg.DataDir == "" {
		st.cfg.DataDir = t.TempDir() // media files and the signing key
	}
	if st.cfg.Media.PublicURL == "" {
		st.cfg.Media.PublicURL = "http://" + ln.Addr().String()
	}
	ts := startOn(t, st.cfg, ln)
	ts.dbURL = dbURL
	return ts
}

// startOn opens the app with cfg and serves it on ln.
func startOn(t testing.TB, cfg Config, ln net.Listener) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	openedAt := time.Now()
	a, err := open(ctx, cfg, true)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatalf("open: %v", err)
	}
	ts := &testServer{
		t: t, app: a, openedAt: openedAt, base: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1),
		client: &http.Client{
			Timeout: 30 * time.Second,
			// Redirects are asserted, not followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport:     &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true},
		},
	}
	go func() { ts.done <- a.serveOn(ctx, ln) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			ts.stop(t)
		}
		a.Close()
		ts.client.CloseIdleConnections()
	})
	// Ready: /readyz 200 (database reachable, projections running).
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-ts.done:
			stopped = true
			t.Fatalf("serveOn returned before the server was ready: %v", err)
		default:
		}
		resp, err := ts.client.Get(ts.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 30s (last: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.readyAt = time.Now()
	ts.admin = ts.loginEventually(adminUser, adminPass)
	var self struct {
		ID    string `json:"id"`
		Admin bool   `json:"admin"`
	}
	ts.mustJSON(ts.get("/api/core/user/self", ts.admin), 200, &self)
	if !self.Admin || self.ID == "" {
		t.Fatalf("bootstrap admin: %+v", self)
	}
	ts.adminID = self.ID
	return ts
}

// stop cancels the serving context and waits for serveOn; it must return
// nil (graceful shutdown).
func (ts *testServer) stop(t testing.TB) {
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			t.Errorf("serveOn returned %v after the context was cancelled, want nil", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("serveOn did not return within 20s of the context being cancelled")
	}
}

// response is an HTTP answer, read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	req    string
}

func (r response) String() string {
	b := string(r.Body)
	if len(b) > 600 {
		b = b[:600] + "..."
	}
	return fmt.Sprintf("%s -> %d %s", r.req, r.Status, b)
}

// request is one call's description.
type request struct {
	method string
	path   string
	token  string      // bearer token (Authorization header) if not empty
	body   any         // JSON-encoded unless []byte or string
	header http.Header // extra headers
}

func (ts *testServer) do(rq request) response {
	ts.t.Helper()
	var body io.Reader
	ctype := ""
	switch b := rq.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
		ctype = "application/json"
	case string:
		body = strings.NewReader(b)
		ctype = "application/json"
	case url.Values:
		body = strings.NewReader(b.Encode())
		ctype = "application/x-www-form-urlencoded"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatalf("encode body: %v", err)
		}
		body = bytes.NewReader(j)
		ctype = "application/json"
	}
	req, err := http.NewRequest(rq.method, ts.base+rq.path, body)
	if err != nil {
		ts.t.Fatalf("new request: %v", err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if rq.token != "" {
		req.Header.Set("Authorization", "Bearer "+rq.token)
	}
	for k, vs := range rq.header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatalf("%s %s: reading body: %v", rq.method, rq.path, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b, req: rq.method + " " + rq.path}
}

func (ts *testServer) get(path, token string) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodGet, path: path, token: token})
}

func (ts *testServer) post(path, token string, body any) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodPost, path: path, token: token, body: body})
}

func (ts *testServer) put(path, token string, body any) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodPut, path: path, token: token, body: body})
}

// mustJSON asserts the status and decodes the body into v (if not nil).
func (ts *testServer) mustJSON(r response, status int, v any) {
	ts.t.Helper()
	if r.Status != status {
		ts.t.Fatalf("%s: want status %d", r, status)
	}
	if v != nil {
		if err := json.Unmarshal(r.Body, v); err != nil {
			ts.t.Fatalf("%s: decoding: %v", r, err)
		}
	}
}

// expectStatus reports (not fatally) a status mismatch.
func expectStatus(t testing.TB, r response, status int) bool {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: want status %d", r, status)
		return false
	}
	return true
}

// haloErr is the HALO error body.
type haloErr struct {
	Error *struct {
		Status  int            `json:"status"`
		Message string         `json:"message"`
		Extra   map[string]any `json:"extra"`
		Type    string         `json:"type"`
	} `json:"error"`
}

// expectHaloError asserts the status and that the body is a HALO error
// ({"error": {"status", "message", "extra", "type": "HaloError"}}).
func expectHaloError(t testing.TB, r response, status int) {
	t.Helper()
	if !expectStatus(t, r, status) {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", r, ct)
	}
	var e haloErr
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == nil {
		t.Errorf("%s: not a HALO error body (%v)", r, err)
		return
	}
	if e.Error.Type != "HaloError" || e.Error.Message == "" || e.Error.Status != status || e.Error.Extra == nil {
		t.Errorf("%s: HALO error body wants type HaloError, a message, status %d and an extra object; got %+v", r, status, *e.Error)
	}
}

// tokenResp is the token endpoint's answer, with expires_in kept raw to
// check its JSON type.
type tokenResp struct {
	AccessToken  string          `json:"access_token"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	Scope        *string         `json:"scope"`
	TokenType    string          `json:"token_type"`
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// passwordGrant is the token call exactly as the SDKs make it: ?_user, a
// form body and the same credentials in a Basic header.
func (ts *testServer) passwordGrant(user, pass string, extra http.Header) response {
	ts.t.Helper()
	h := http.Header{"Authorization": {basic(user, pass)}}
	for k, v := range extra {
		h[k] = v
	}
	return ts.do(request{method: http.MethodPost, path: "/api/oauth/token?_user", header: h,
		body: url.Values{"grant_type": {"password"}, "username": {user}, "password": {pass}}})
}

// loginEventually is login that tolerates a short delay (the bootstrap
// admin may not be projected yet when /readyz first answers); it records
// the delay for TestStartup.
func (ts *testServer) loginEventually(user, pass string) string {
	ts.t.Helper()
	// Every failed attempt counts towards the user's lockout (10), so the
	// retries back off: 9 attempts over about 12 seconds.
	wait := 25 * time.Millisecond
	for attempt := 1; ; attempt++ {
		r := ts.passwordGrant(user, pass, nil)
		ts.adminLoginAttempts++
		if r.Status == 200 || attempt == 9 {
			ts.adminLoginAfterReady = time.Since(ts.readyAt)
			var tr tokenResp
			ts.mustJSON(r, 200, &tr)
			return tr.AccessToken
		}
		time.Sleep(wait)
		wait = min(2*wait, 3*time.Second)
	}
}

// login returns an access token or fails the test.
func (ts *testServer) login(user, pass string) string {
	ts.t.Helper()
	var tr tokenResp
	ts.mustJSON(ts.passwordGrant(user, pass, nil), 200, &tr)
	if tr.AccessToken == "" {
		ts.t.Fatalf("login %s: empty access token", user)
	}
	return tr.AccessToken
}

// userView is a user as the API returns it.
type userView struct {
	ID         string   `json:"id"`
	Username   string   `json:"username"`
	Email      string   `json:"email"`
	Name       string   `json:"name"`
	Admin      bool     `json:"admin"`
	AllowedIPs []string `json:"allowedIps"`
	Disabled   bool     `json:"disabled"`
}

// createUser creates a user as admin and returns it.
func (ts *testServer) createUser(username string, fields map[string]any) userView {
	ts.t.Helper()
	body := map[string]any{"username": username, "password": userPass, "email": username + "@example.com", "name": "User " + username}
	for k, v := range fields {
		body[k] = v
	}
	var u userView
	ts.mustJSON(ts.post("/core-api/user/", ts.admin, body), 201, &u)
	if u.ID == "" || u.Username != username {
		ts.t.Fatalf("create user %s: got %+v", username, u)
	}
	return u
}

// appView is an app as the API returns it.
type appView struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	ClientID     string  `json:"clientId"`
	ClientSecret *string `json:"clientSecret"`
}

func (ts *testServer) createApp(name string) appView {
	ts.t.Helper()
	var a appView
	ts.mustJSON(ts.post("/core-api/app/", ts.admin, map[string]any{"name": name}), 201, &a)
	if a.ID == "" || a.ClientID == "" || a.ClientSecret == nil || *a.ClientSecret == "" || a.Name != name {
		ts.t.Fatalf("create app %s: got %+v", name, a)
	}
	return a
}

// rightView is one right on the wire.
type rightView struct {
	App         string   `json:"app"`
	Module      string   `json:"module,omitempty"`
	Item        string   `json:"item,omitempty"`
	Permissions []string `json:"permissions"`
}

func (r rightView) String() string {
	s := "app " + r.App
	if r.Module != "" {
		s += " module " + r.Module
	}
	if r.Item != "" {
		s += " item " + r.Item
	}
	return s + " " + strings.Join(r.Permissions, ",")
}

func rightsText(rs []rightView) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

func (ts *testServer) grant(token string, body map[string]any) response {
	ts.t.Helper()
	return ts.post("/api/authentication/right/grant", token, body)
}

func (ts *testServer) revoke(token string, body map[string]any) response {
	ts.t.Helper()
	return ts.post("/api/authentication/right/revoke", token, body)
}

// rightsOf lists a user's effective rights (as admin).
func (ts *testServer) rightsOf(user, app string) []rightView {
	ts.t.Helper()
	var out struct {
		User   string      `json:"user"`
		Rights []rightView `json:"rights"`
	}
	q := url.Values{"user": {user}}
	if app != "" {
		q.Set("app", app)
	}
	ts.mustJSON(ts.get("/api/authentication/right?"+q.Encode(), ts.admin), 200, &out)
	return out.Rights
}

// appIDs lists the ids GET /core-api/app/ shows to token.
func (ts *testServer) appIDs(token string) []string {
	ts.t.Helper()
	var apps []appView
	ts.mustJSON(ts.get("/core-api/app/", token), 200, &apps)
	ids := make([]string, len(apps))
	for i, a := range apps {
		ids[i] = a.ID
	}
	return ids
}

func errorsIsClosed(err error) bool {
	return err != nil && (errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection refused"))
}

// auditChange and auditReport are GET /api/audit/rights on the wire.
type auditChange struct {
	EventID     string   `json:"eventId"`
	Position    int64    `json:"position"`
	RecordedAt  int64    `json:"recordedAt"`
	Action      string   `json:"action"`
	App         string   `json:"app"`
	Module      string   `json:"module"`
	Item        string   `json:"item"`
	Permissions []string `json:"permissions"`
	By          string   `json:"by"`
	ClientIP    string   `json:"clientIp"`
	Correlation string   `json:"correlationId"`
}

type auditReport struct {
	User      string        `json:"user"`
	App       string        `json:"app"`
	At        int64         `json:"at"`
	Changes   []auditChange `json:"changes"`
	Effective []rightView   `json:"effective"`
}

func auditPath(user, app, at string) string {
	q := url.Values{}
	if user != "" {
		q.Set("user", user)
	}
	if app != "" {
		q.Set("app", app)
	}
	if at != "" {
		q.Set("at", at)
	}
	return "/api/audit/rights?" + q.Encode()
}

// audit replays a user's rights history over HTTP (200 required).
func (ts *testServer) audit(token, user, app, at string) auditReport {
	ts.t.Helper()
	var rep auditReport
	ts.mustJSON(ts.get(auditPath(user, app, at), token), 200, &rep)
	return rep
}

// with returns the server bound to t, for helpers called from subtests
// (FailNow must run on the goroutine of the test that fails).
func (ts *testServer) with(t testing.TB) *testServer {
	c := *ts
	c.t = t
	return &c
}

// atOnce runs f(0), …, f(n-1) on n goroutines at once and reports every
// error they return.
func atOnce(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// another starts a second process of the program on ts's database, as a
// second `cms serve` behind the same load balancer would run.
func (ts *testServer) another(t testing.TB) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startOn(t, ts.app.cfg, ln)
}

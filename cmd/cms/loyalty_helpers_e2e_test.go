package main

// Helpers of the loyalty end-to-end tests: paths, typed views of the
// loyalty shapes, and members (identified users signed in through an app).

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Paths of the loyalty API.
const (
	loyaltyUserPath      = "/api/loyalty/user"
	loyaltySearchPath    = "/api/loyalty/user/search"
	loyaltyRebalancePath = "/api/loyalty/user/rebalance"
	loyaltySelfPath      = "/api/loyalty/user/self"
	stampCardPath        = "/api/loyalty/stampcard"
	loyaltyAuditPath     = "/api/audit/loyalty"
)

// startLoyaltyServer is startServer with a generous read-your-writes
// bound: every loyalty write waits for its projection, and a machine
// busy with other tests must not turn a slow projection into a failure.
func startLoyaltyServer(t testing.TB, opts ...serverOption) *testServer {
	t.Helper()
	return startServer(t, append([]serverOption{withConfig(func(c *Config) { c.ReadYourWrites = 20 * time.Second })}, opts...)...)
}

func userPath(id, rest string) string { return loyaltyUserPath + "/" + id + rest }

type expiryView struct {
	Points    int64 `json:"points"`
	ExpiresAt int64 `json:"expiresAt"`
}

type txView struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Amount          int64  `json:"amount"`
	Balance         int64  `json:"balance"`
	PreviousBalance *int64 `json:"previousBalance"`
	Reason          string `json:"reason"`
	Reference       string `json:"reference"`
	IdempotencyKey  string `json:"idempotencyKey"`
	ExpiresAt       *int64 `json:"expiresAt"`
	CreatedAt       int64  `json:"createdAt"`
	CreatedBy       string `json:"createdBy"`
}

type userCardView struct {
	ID          string `json:"id"`
	CardID      string `json:"cardId"`
	Name        string `json:"name"`
	Reward      string `json:"reward"`
	Stamps      int    `json:"stamps"`
	Needed      int    `json:"needed"`
	Completed   bool   `json:"completed"`
	Redeemed    bool   `json:"redeemed"`
	CompletedAt *int64 `json:"completedAt"`
	RedeemedAt  *int64 `json:"redeemedAt"`
	CreatedAt   int64  `json:"createdAt"`
}

type loyaltyUserView struct {
	ID               string         `json:"id"`
	AppID            int            `json:"appId"`
	Email            string         `json:"email"`
	Name             string         `json:"name"`
	Surname          string         `json:"surname"`
	DisplayName      string         `json:"displayName"`
	Balance          int64          `json:"balance"`
	Earned           int64          `json:"earned"`
	Redeemed         int64          `json:"redeemed"`
	Expired          int64          `json:"expired"`
	Adjusted         int64          `json:"adjusted"`
	TransactionCount int            `json:"transactionCount"`
	ActiveStampCards int            `json:"activeStampCards"`
	NextExpiry       *expiryView    `json:"nextExpiry"`
	CreatedAt        int64          `json:"createdAt"`
	UpdatedAt        *int64         `json:"updatedAt"`
	Transactions     []txView       `json:"transactions"`
	StampCards       []userCardView `json:"stampCards"`
}

type loyaltyPageView struct {
	Pagination paginationView    `json:"pagination"`
	Items      []loyaltyUserView `json:"items"`
}

func (p loyaltyPageView) ids() []string {
	out := make([]string, len(p.Items))
	for i, u := range p.Items {
		out[i] = u.ID
	}
	return out
}

type txPageView struct {
	Pagination paginationView `json:"pagination"`
	Items      []txView       `json:"items"`
}

type pointsView struct {
	User        string `json:"user"`
	Balance     int64  `json:"balance"`
	Transaction txView `json:"transaction"`
}

type stampsView struct {
	User       string         `json:"user"`
	StampCards []userCardView `json:"stampCards"`
	Completed  []string       `json:"completed"`
}

type cardRedeemedView struct {
	User      string       `json:"user"`
	StampCard userCardView `json:"stampCard"`
}

type stampCardView struct {
	ID           string `json:"id"`
	AppID        int    `json:"appId"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	StampsNeeded int    `json:"stampsNeeded"`
	Reward       string `json:"reward"`
	Retired      bool   `json:"retired"`
	CreatedAt    int64  `json:"createdAt"`
	UpdatedAt    int64  `json:"updatedAt"`
}

type rebalancedView struct {
	User            string `json:"user"`
	PreviousBalance int64  `json:"previousBalance"`
	Balance         int64  `json:"balance"`
	Corrected       bool   `json:"corrected"`
}

type loyaltyAuditEntryView struct {
	EventID         string `json:"eventId"`
	Position        int64  `json:"position"`
	Type            string `json:"type"`
	Transaction     string `json:"transaction"`
	Amount          int64  `json:"amount"`
	Balance         int64  `json:"balance"`
	RecordedBalance int64  `json:"recordedBalance"`
	Reason          string `json:"reason"`
	CreatedAt       int64  `json:"createdAt"`
	CreatedBy       string `json:"createdBy"`
	ClientIP        string `json:"clientIp"`
}

type loyaltyAuditView struct {
	User            string                  `json:"user"`
	App             string                  `json:"app"`
	OpeningBalance  int64                   `json:"openingBalance"`
	Entries         []loyaltyAuditEntryView `json:"entries"`
	Balance         int64                   `json:"balance"`
	RecordedBalance int64                   `json:"recordedBalance"`
	Consistent      bool                    `json:"consistent"`
	ReadModel       *struct {
		Balance        int64 `json:"balance"`
		AppliedVersion int64 `json:"appliedVersion"`
		LastVersion    int64 `json:"lastVersion"`
		CaughtUp       bool  `json:"caughtUp"`
		Matches        bool  `json:"matches"`
	} `json:"readModel"`
}

// member is an identified user of an app, signed in on a device of it.
type member struct {
	ID, Email, Alias, Token string
	AppNumber               int
}

// newMember registers an identified user with a profile on a new device of
// the app and signs them in.
func (ts *testServer) newMember(appTok, email, name, surname string) member {
	ts.t.Helper()
	var dev struct {
		Alias string      `json:"alias"`
		AppID json.Number `json:"appId"`
	}
	ts.mustJSON(ts.post(appUserPath, appTok, map[string]any{"devices": []any{}, "tags": []any{}}), http.StatusCreated, &dev)
	var p profileView
	ts.mustJSON(ts.post(registerPath, appTok, map[string]any{
		"auth":    map[string]any{"email": email, "password": "member-password", "deviceId": dev.Alias, "network": "halo"},
		"profile": map[string]any{"email": email, "name": name, "surname": surname},
	}), http.StatusCreated, &p)
	l := ts.loginForm(appTok, email, "member-password", dev.Alias)
	n, err := strconv.Atoi(dev.AppID.String())
	if err != nil || p.ID == "" {
		ts.t.Fatalf("member %s: id %q, app number %q", email, p.ID, dev.AppID)
	}
	return member{ID: p.ID, Email: email, Alias: dev.Alias, Token: l.Token.AccessToken, AppNumber: n}
}

// points posts to /earn, /redeem or /adjust of the user.
func (ts *testServer) points(token, user, kind string, body any) response {
	ts.t.Helper()
	return ts.post(userPath(user, "/"+kind), token, body)
}

// mustPoints records a transaction and wants 201.
func (ts *testServer) mustPoints(token, user, kind string, body any) pointsView {
	ts.t.Helper()
	var v pointsView
	ts.mustJSON(ts.points(token, user, kind, body), http.StatusCreated, &v)
	if v.Transaction.ID == "" || (v.User != user && user != "self") {
		ts.t.Fatalf("%s %s: %+v", kind, user, v)
	}
	return v
}

func (ts *testServer) loyaltyUser(token, id string) loyaltyUserView {
	ts.t.Helper()
	var u loyaltyUserView
	ts.mustJSON(ts.get(userPath(id, ""), token), http.StatusOK, &u)
	return u
}

func (ts *testServer) transactions(token, id string, q url.Values) txPageView {
	ts.t.Helper()
	var p txPageView
	ts.mustJSON(ts.get(userPath(id, "/transactions?"+q.Encode()), token), http.StatusOK, &p)
	return p
}

// allTransactions lists every transaction of the user, newest first.
func (ts *testServer) allTransactions(id string) []txView {
	ts.t.Helper()
	var out []txView
	for page := 1; ; page++ {
		p := ts.transactions(ts.admin, id, url.Values{"page": {strconv.Itoa(page)}, "limit": {"1000"}})
		out = append(out, p.Items...)
		if len(out) >= p.Pagination.TotalItems || len(p.Items) == 0 {
			return out
		}
	}
}

func (ts *testServer) loyaltySearch(token string, body map[string]any) loyaltyPageView {
	ts.t.Helper()
	var p loyaltyPageView
	ts.mustJSON(ts.post(loyaltySearchPath, token, body), http.StatusOK, &p)
	return p
}

func (ts *testServer) defineCard(token string, body map[string]any) stampCardView {
	ts.t.Helper()
	var c stampCardView
	ts.mustJSON(ts.post(stampCardPath, token, body), http.StatusCreated, &c)
	if c.ID == "" {
		ts.t.Fatalf("defined card: %+v", c)
	}
	return c
}

// loyaltyEvents counts the events of loyalty streams (accounts and card
// definitions) in the log.
func (ts *testServer) loyaltyEvents() int {
	ts.t.Helper()
	var n int
	if err := ts.app.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE stream_id LIKE 'loyalty%'`).Scan(&n); err != nil {
		ts.t.Fatal(err)
	}
	return n
}

// waitLoyaltyUser polls GET /api/loyalty/user/{id} as admin until cond
// holds.
func (ts *testServer) waitLoyaltyUser(t testing.TB, id string, within time.Duration, cond func(loyaltyUserView) bool) loyaltyUserView {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		u := ts.loyaltyUser(ts.admin, id)
		if cond(u) {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("loyalty user %s after %s: %+v", id, within, u)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func txIDs(ts []txView) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

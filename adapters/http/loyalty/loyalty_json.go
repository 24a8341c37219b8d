package loyalty

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/fault"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
)

// Wire shapes of the loyalty API (ours: HALO published only the paths).
// Amounts are whole points; on the wire a transaction's amount is signed
// (credits positive, debits negative), so that each transaction's balance
// is the previous one plus its amount.

// loyaltyUserJSON is a loyalty user: the identified user's profile and
// the account's figures. appId is the app's number, as app users show it.
type loyaltyUserJSON struct {
	ID               string      `json:"id"`
	AppID            int         `json:"appId"`
	Email            string      `json:"email"`
	Name             string      `json:"name"`
	Surname          string      `json:"surname"`
	DisplayName      string      `json:"displayName"`
	Balance          int64       `json:"balance"`
	Earned           int64       `json:"earned"`
	Redeemed         int64       `json:"redeemed"`
	Expired          int64       `json:"expired"`
	Adjusted         int64       `json:"adjusted"`
	TransactionCount int         `json:"transactionCount"`
	ActiveStampCards int         `json:"activeStampCards"`
	NextExpiry       *expiryJSON `json:"nextExpiry"`
	CreatedAt        int64       `json:"createdAt"`
	UpdatedAt        *int64      `json:"updatedAt"`
}

type expiryJSON struct {
	Points    int64 `json:"points"`
	ExpiresAt int64 `json:"expiresAt"`
}

// loyaltyUserDetailJSON is one user with the newest transactions and the
// stamp cards (GET one, self).
type loyaltyUserDetailJSON struct {
	loyaltyUserJSON
	Transactions []loyaltyTransactionJSON `json:"transactions"`
	StampCards   []userCardJSON           `json:"stampCards"`
}

type loyaltyTransactionJSON struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Amount          int64  `json:"amount"`
	Balance         int64  `json:"balance"`
	PreviousBalance *int64 `json:"previousBalance,omitempty"` // corrections only
	Reason          string `json:"reason"`
	Reference       string `json:"reference"`
	IdempotencyKey  string `json:"idempotencyKey"`
	ExpiresAt       *int64 `json:"expiresAt"`
	CreatedAt       int64  `json:"createdAt"`
	CreatedBy       string `json:"createdBy"`
}

// userCardJSON is one of a user's stamp cards.
type userCardJSON struct {
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

// stampCardJSON is a stamp card definition.
type stampCardJSON struct {
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

type loyaltyPageJSON struct {
	Pagination httpapi.PaginationJSON `json:"pagination"`
	Items      []loyaltyUserJSON      `json:"items"`
}

type transactionPageJSON struct {
	Pagination httpapi.PaginationJSON   `json:"pagination"`
	Items      []loyaltyTransactionJSON `json:"items"`
}

// pointsResultJSON answers earn, redeem and adjust: balance is the
// account's balance now, transaction the one recorded (on a replay, the
// original).
type pointsResultJSON struct {
	User        string                 `json:"user"`
	Balance     int64                  `json:"balance"`
	Transaction loyaltyTransactionJSON `json:"transaction"`
}

type stampsResultJSON struct {
	User       string         `json:"user"`
	StampCards []userCardJSON `json:"stampCards"`
	Completed  []string       `json:"completed"`
}

type cardRedeemedJSON struct {
	User      string       `json:"user"`
	StampCard userCardJSON `json:"stampCard"`
}

type rebalancedJSON struct {
	User            string `json:"user"`
	PreviousBalance int64  `json:"previousBalance"`
	Balance         int64  `json:"balance"`
	Corrected       bool   `json:"corrected"`
}

func msPtr(t *time.Time) *int64 {
	if t == nil || t.IsZero() {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

func transactionJSONOf(t rmloyalty.Transaction) loyaltyTransactionJSON {
	return loyaltyTransactionJSON{ID: t.ID, Type: t.Kind, Amount: t.Amount, Balance: t.Balance,
		PreviousBalance: t.PreviousBalance, Reason: t.Reason, Reference: t.Reference, IdempotencyKey: t.IdempotencyKey,
		ExpiresAt: msPtr(t.ExpiresAt), CreatedAt: httpapi.Ms(t.At), CreatedBy: t.By}
}

func transactionsJSON(ts []rmloyalty.Transaction) []loyaltyTransactionJSON {
	out := make([]loyaltyTransactionJSON, len(ts))
	for i, t := range ts {
		out[i] = transactionJSONOf(t)
	}
	return out
}

func userCardJSONOf(c rmloyalty.UserCard) userCardJSON {
	return userCardJSON{ID: c.ID, CardID: c.Card, Name: c.Name, Reward: c.Reward, Stamps: c.Stamps, Needed: c.Needed,
		Completed: c.CompletedAt != nil, Redeemed: c.RedeemedAt != nil, CompletedAt: msPtr(c.CompletedAt),
		RedeemedAt: msPtr(c.RedeemedAt), CreatedAt: httpapi.Ms(c.CreatedAt)}
}

func loyaltyUserJSONOf(a rmloyalty.Account, appNumber int) loyaltyUserJSON {
	j := loyaltyUserJSON{ID: a.ID, AppID: appNumber, Email: a.Email, Name: a.Name, Surname: a.Surname,
		DisplayName: a.DisplayName, Balance: a.Balance, Earned: a.Earned, Redeemed: a.Redeemed, Expired: a.Expired,
		Adjusted: a.Adjusted, TransactionCount: a.Transactions, ActiveStampCards: a.ActiveCards,
		CreatedAt: httpapi.Ms(a.CreatedAt), UpdatedAt: msPtr(a.UpdatedAt)}
	if e := a.NextExpiry; e != nil {
		j.NextExpiry = &expiryJSON{Points: e.Points, ExpiresAt: httpapi.Ms(e.At)}
	}
	return j
}

func loyaltyUserDetailJSONOf(v rmloyalty.AccountView, appNumber int) loyaltyUserDetailJSON {
	out := loyaltyUserDetailJSON{loyaltyUserJSON: loyaltyUserJSONOf(v.Account, appNumber),
		Transactions: transactionsJSON(v.Recent), StampCards: make([]userCardJSON, len(v.Cards))}
	for i, c := range v.Cards {
		out.StampCards[i] = userCardJSONOf(c)
	}
	return out
}

func stampCardJSONOf(c rmloyalty.Card, appNumber int) stampCardJSON {
	return stampCardJSON{ID: c.ID, AppID: appNumber, Name: c.Name, Description: c.Description,
		StampsNeeded: c.StampsNeeded, Reward: c.Reward, Retired: c.Retired, CreatedAt: httpapi.Ms(c.CreatedAt), UpdatedAt: httpapi.Ms(c.UpdatedAt)}
}

// wholeNumber reads a JSON integer: a number literal without fraction or
// exponent that fits in 64 bits. Strings, fractions and null are refused
// with a 400 naming the field; ok is false when the value was left out.
func wholeNumber(raw json.RawMessage, field string) (n int64, ok bool, err error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil {
		return 0, true, fault.Invalidf("%s must be a whole number", field).With("field", field)
	}
	return n, true, nil
}

// idempotencyKey takes the key from the body or the Idempotency-Key
// header; both given and different is a 400.
func idempotencyKey(r *http.Request, body string) (string, error) {
	h := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	switch {
	case h == "":
		return body, nil
	case body == "" || body == h:
		return h, nil
	}
	return "", fault.Invalidf("the Idempotency-Key header and the body's idempotencyKey differ").With("field", "idempotencyKey")
}

// pointsBody is earn, redeem and adjust.
type pointsBody struct {
	Amount         json.RawMessage `json:"amount"`
	Reason         string          `json:"reason"`
	Reference      string          `json:"reference"`
	IdempotencyKey string          `json:"idempotencyKey"`
	ExpiresAt      json.RawMessage `json:"expiresAt"` // epoch ms; null or absent: never
}

func (b pointsBody) points(r *http.Request) (cmdloyalty.Points, error) {
	var p cmdloyalty.Points
	amount, ok, err := wholeNumber(b.Amount, "amount")
	if err != nil {
		return p, err
	}
	if !ok {
		return p, fault.Invalidf("amount is required").With("field", "amount")
	}
	if p.IdempotencyKey, err = idempotencyKey(r, b.IdempotencyKey); err != nil {
		return p, err
	}
	p.Amount, p.Reason, p.Reference = amount, b.Reason, b.Reference
	p.ExpiresAt, err = epochMillis(b.ExpiresAt, "expiresAt")
	return p, err
}

// epochMillis reads a moment given as epoch milliseconds (a JSON number;
// null or left out: none).
func epochMillis(raw json.RawMessage, field string) (*time.Time, error) {
	s := string(bytes.TrimSpace(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 1e15 {
		return nil, fault.Invalidf("%s must be epoch milliseconds", field).With("field", field)
	}
	t := time.UnixMilli(int64(v))
	return &t, nil
}

// stampsBody is POST /api/loyalty/user/{id}/stamps.
type stampsBody struct {
	Card           string          `json:"card"`
	Stamps         json.RawMessage `json:"stamps"`
	Reason         string          `json:"reason"`
	Reference      string          `json:"reference"`
	IdempotencyKey string          `json:"idempotencyKey"`
}

func (b stampsBody) stamps(r *http.Request) (cmdloyalty.Stamps, error) {
	st := cmdloyalty.Stamps{Card: b.Card, Reason: b.Reason, Reference: b.Reference}
	n, ok, err := wholeNumber(b.Stamps, "stamps")
	switch {
	case err != nil:
		return st, err
	case !ok:
		return st, fault.Invalidf("stamps is required").With("field", "stamps")
	case n < math.MinInt32 || n > math.MaxInt32:
		return st, fault.Invalidf("stamps must be from 1 to 1000").With("field", "stamps")
	}
	if b.Card == "" {
		return st, fault.Invalidf("card is required").With("field", "card")
	}
	st.Count = int(n)
	st.IdempotencyKey, err = idempotencyKey(r, b.IdempotencyKey)
	return st, err
}

// cardRedeemBody is the optional body of a stamp card redemption.
type cardRedeemBody struct {
	IdempotencyKey string `json:"idempotencyKey"`
}

// rebalanceBody is POST /api/loyalty/user/rebalance.
type rebalanceBody struct {
	User string `json:"user"`
}

// stampCardBody defines or changes a stamp card. The keys only the server
// sets (id, retired, dates) are accepted and ignored, so that what GET
// returned can be sent back; appId is the response's name of app.
type stampCardBody struct {
	App          any             `json:"app"`
	AppID        any             `json:"appId"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	StampsNeeded json.RawMessage `json:"stampsNeeded"`
	Reward       string          `json:"reward"`

	ID        any `json:"id"`
	Retired   any `json:"retired"`
	CreatedAt any `json:"createdAt"`
	UpdatedAt any `json:"updatedAt"`
}

func (b stampCardBody) definition() (cmdloyalty.CardDefinition, error) {
	d := cmdloyalty.CardDefinition{Name: b.Name, Description: b.Description, Reward: b.Reward}
	n, ok, err := wholeNumber(b.StampsNeeded, "stampsNeeded")
	switch {
	case err != nil:
		return d, err
	case !ok:
		return d, fault.Invalidf("stampsNeeded is required").With("field", "stampsNeeded")
	case n < math.MinInt32 || n > math.MaxInt32:
		return d, fault.Invalidf("stampsNeeded must be from 1 to 1000").With("field", "stampsNeeded")
	}
	d.StampsNeeded = int(n)
	return d, nil
}

// app is the body's app: app, or appId (both given must agree).
func (b stampCardBody) app() (any, error) { return oneApp(b.App, b.AppID) }

// oneApp is the app a body names by app or by appId (appId is how the
// other APIs name it); both given must agree.
func oneApp(app, appID any) (any, error) {
	switch {
	case app == nil:
		return appID, nil
	case appID == nil || httpapi.ToString(app) == httpapi.ToString(appID):
		return app, nil
	}
	return nil, fault.Invalidf("app and appId differ").With("field", "app")
}

// loyaltySearchBody is POST /api/loyalty/user/search.
type loyaltySearchBody struct {
	App    any    `json:"app"`
	AppID  any    `json:"appId"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Alias  string `json:"alias"`
	Points *struct {
		Min json.RawMessage `json:"min"`
		Max json.RawMessage `json:"max"`
	} `json:"points"`
	HasActiveStampCard *bool `json:"hasActiveStampCard"`
	Sort               any   `json:"sort"` // ["balance desc", "name"] or "balance desc,name"
	Pagination         *struct {
		Page  any `json:"page"`
		Limit any `json:"limit"`
	} `json:"pagination"`
}

// loyaltySortFields are the fields a loyalty search sorts by, by their
// wire names (matched case-insensitively).
var loyaltySortFields = []string{"balance", "name", "email", "createdAt", "updatedAt"}

// query reads everything but the app into a search query.
func (b loyaltySearchBody) query() (rmloyalty.SearchQuery, error) {
	q := rmloyalty.SearchQuery{Name: strings.TrimSpace(b.Name), Email: strings.TrimSpace(b.Email),
		Alias: strings.TrimSpace(b.Alias), HasActiveCard: b.HasActiveStampCard, Page: 1, Limit: httpapi.DefaultLimit}
	if p := b.Points; p != nil {
		for _, x := range []struct {
			raw   json.RawMessage
			field string
			dst   **int64
		}{{p.Min, "points.min", &q.MinPoints}, {p.Max, "points.max", &q.MaxPoints}} {
			if string(bytes.TrimSpace(x.raw)) == "null" {
				continue
			}
			n, ok, err := wholeNumber(x.raw, x.field)
			if err != nil {
				return q, err
			}
			if ok {
				*x.dst = &n
			}
		}
		if q.MinPoints != nil && q.MaxPoints != nil && *q.MinPoints > *q.MaxPoints {
			return q, fault.Invalidf("points.min is above points.max").With("field", "points")
		}
	}
	var err error
	if q.Sort, err = loyaltySort(b.Sort); err != nil {
		return q, err
	}
	if p := b.Pagination; p != nil {
		if q.Page, err = httpapi.FlexInt(p.Page, "page", 1); err != nil {
			return q, err
		}
		if q.Limit, err = httpapi.FlexInt(p.Limit, "limit", httpapi.DefaultLimit); err != nil {
			return q, err
		}
		if q.Page < 1 {
			return q, fault.Invalidf("pagination.page must be 1 or more").With("field", "pagination.page")
		}
		if q.Limit < 1 || q.Limit > httpapi.MaxPage {
			return q, fault.Invalidf("pagination.limit must be from 1 to %d", httpapi.MaxPage).With("field", "pagination.limit")
		}
	}
	return q, nil
}

// app is the body's app: app, or appId as the other searches name it.
func (b loyaltySearchBody) app() (any, error) { return oneApp(b.App, b.AppID) }

// loyaltySort reads sort keys: a list of "field [asc|desc]", or one string
// of them separated by commas.
func loyaltySort(v any) ([]rmloyalty.SortKey, error) {
	var keys []string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		keys = strings.Split(x, ",")
	case []any:
		for _, k := range x {
			s, ok := k.(string)
			if !ok {
				return nil, fault.Invalidf(`sort must be a list of "field asc|desc" strings`).With("field", "sort")
			}
			keys = append(keys, s)
		}
	default:
		return nil, fault.Invalidf(`sort must be a list of "field asc|desc" strings`).With("field", "sort")
	}
	var out []rmloyalty.SortKey
	seen := map[string]bool{}
	for _, k := range keys {
		parts := strings.Fields(k)
		if len(parts) == 0 && len(keys) == 1 {
			continue // "sort": ""
		}
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fault.Invalidf("sort key %q: want \"field asc|desc\"", k).With("field", "sort")
		}
		field := ""
		for _, f := range loyaltySortFields {
			if strings.EqualFold(f, parts[0]) {
				field = f
			}
		}
		if field == "" {
			return nil, fault.Invalidf("cannot sort by %q; sort by %s", parts[0], strings.Join(loyaltySortFields, ", ")).
				With("field", "sort")
		}
		if seen[field] {
			return nil, fault.Invalidf("sort names %s twice", field).With("field", "sort")
		}
		seen[field] = true
		key := rmloyalty.SortKey{Field: field}
		if len(parts) == 2 {
			switch strings.ToLower(parts[1]) {
			case "asc":
			case "desc":
				key.Desc = true
			default:
				return nil, fault.Invalidf("sort direction %q: want asc or desc", parts[1]).With("field", "sort")
			}
		}
		out = append(out, key)
	}
	return out, nil
}

// loyaltyAuditJSON is GET /api/audit/loyalty.
type loyaltyAuditJSON struct {
	User            string                  `json:"user"`
	App             string                  `json:"app"`
	From            *int64                  `json:"from"`
	To              *int64                  `json:"to"`
	OpeningBalance  int64                   `json:"openingBalance"`
	Entries         []loyaltyAuditEntryJSON `json:"entries"`
	Balance         int64                   `json:"balance"`
	RecordedBalance int64                   `json:"recordedBalance"`
	Consistent      bool                    `json:"consistent"`
	// ReadModel: only without to (the read model holds the balance now).
	ReadModel *loyaltyAuditReadModelJSON `json:"readModel,omitempty"`
}

// loyaltyAuditReadModelJSON is the loyalty read model's balance of the
// account, set against the replay.
type loyaltyAuditReadModelJSON struct {
	Balance        int64 `json:"balance"`
	AppliedVersion int64 `json:"appliedVersion"`
	LastVersion    int64 `json:"lastVersion"`
	CaughtUp       bool  `json:"caughtUp"`
	Matches        bool  `json:"matches"`
}

type loyaltyAuditEntryJSON struct {
	EventID         string `json:"eventId"`
	Position        int64  `json:"position"`
	Type            string `json:"type"`
	Transaction     string `json:"transaction,omitempty"`
	Amount          int64  `json:"amount"`
	Balance         int64  `json:"balance"`
	RecordedBalance int64  `json:"recordedBalance"`
	Reason          string `json:"reason,omitempty"`
	Reference       string `json:"reference,omitempty"`
	IdempotencyKey  string `json:"idempotencyKey,omitempty"`
	Lot             string `json:"lot,omitempty"`
	Card            string `json:"card,omitempty"`
	UserCard        string `json:"userCard,omitempty"`
	Stamps          int    `json:"stamps,omitempty"`
	CreatedAt       int64  `json:"createdAt"`
	CreatedBy       string `json:"createdBy"`
	ClientIP        string `json:"clientIp"`
	Correlation     string `json:"correlationId,omitempty"`
}

func loyaltyAuditJSONOf(rep rmaudit.LoyaltyReport) loyaltyAuditJSON {
	out := loyaltyAuditJSON{User: rep.User, App: rep.App, From: msPtr(&rep.From), To: msPtr(&rep.To),
		OpeningBalance: rep.Opening, Entries: make([]loyaltyAuditEntryJSON, len(rep.Entries)), Balance: rep.Balance,
		RecordedBalance: rep.Recorded, Consistent: rep.Consistent}
	if m := rep.ReadModel; m != nil {
		out.ReadModel = &loyaltyAuditReadModelJSON{Balance: m.Balance, AppliedVersion: m.Applied, LastVersion: m.Last,
			CaughtUp: m.CaughtUp, Matches: m.Matches}
	}
	for i, e := range rep.Entries {
		out.Entries[i] = loyaltyAuditEntryJSON{EventID: e.EventID, Position: e.Position.Pos, Type: e.Type,
			Transaction: e.Transaction, Amount: e.Amount, Balance: e.Balance, RecordedBalance: e.Recorded,
			Reason: e.Reason, Reference: e.Reference, IdempotencyKey: e.IdempotencyKey, Lot: e.Lot, Card: e.Card,
			UserCard: e.UserCard, Stamps: e.Stamps, CreatedAt: httpapi.Ms(e.RecordedAt), CreatedBy: e.By, ClientIP: e.ClientIP,
			Correlation: e.Correlation}
	}
	return out
}

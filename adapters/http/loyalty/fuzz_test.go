package loyalty

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
)

// FuzzLoyaltyBodies feeds arbitrary bytes to the loyalty context's body
// types and what turns them into commands and queries (points, stamps,
// stamp cards, search): nothing panics, and every refusal is a client
// error, never an internal one.
func FuzzLoyaltyBodies(f *testing.F) {
	for _, s := range []string{
		`{"amount":100,"reason":"purchase","reference":"order-1","idempotencyKey":"k1","expiresAt":1700000000000}`,
		`{"card":"c1","stamps":2,"reason":"coffee","idempotencyKey":"k2"}`,
		`{"app":"a1","name":"Coffee","description":"Ten coffees","stampsNeeded":10,"reward":"A free coffee"}`,
		`{"appId":"a1","name":"ann","points":{"min":10,"max":null},"hasActiveStampCard":true,"sort":["balance desc","name"],"pagination":{"page":"2","limit":10}}`,
		`{"app":1,"appId":"1","sort":"balance desc,name","points":{"min":5,"max":1}}`,
		`{"amount":1.5,"expiresAt":-1}`, `{"stamps":99999999999,"stampsNeeded":"10"}`,
		`{"user":"u1"}`, `{}`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) { fuzztest.ClientError(t, what, err) }
		decode := func(v any) bool { return httpapi.DecodeFrom(bytes.NewReader(body), v) == nil }
		r := httptest.NewRequest(http.MethodPost, "/api/loyalty/user/u1/earn", nil)
		r.Header.Set("Idempotency-Key", "k1")
		var pb pointsBody
		if decode(&pb) {
			_, err := pb.points(r)
			check("pointsBody.points", err)
		}
		var sb stampsBody
		if decode(&sb) {
			_, err := sb.stamps(r)
			check("stampsBody.stamps", err)
		}
		var cb stampCardBody
		if decode(&cb) {
			_, err := cb.definition()
			check("stampCardBody.definition", err)
			_, err = cb.app()
			check("stampCardBody.app", err)
		}
		var qb loyaltySearchBody
		if decode(&qb) {
			_, err := qb.query()
			check("loyaltySearchBody.query", err)
			_, err = qb.app()
			check("loyaltySearchBody.app", err)
		}
		var rb cardRedeemBody
		if decode(&rb) {
			_, err := idempotencyKey(r, rb.IdempotencyKey)
			check("cardRedeemBody key", err)
		}
		var bb rebalanceBody
		check("rebalanceBody", httpapi.DecodeFrom(bytes.NewReader(body), &bb))
	})
}

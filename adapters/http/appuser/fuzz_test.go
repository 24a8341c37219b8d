package appuser

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
	"github.com/halocms/halocms/domain/appuser"
)

// FuzzAppUserBodies feeds arbitrary bytes to the app user context's body
// readers and what turns them into commands and queries (app user, its
// profile's validation, sign-up, sign-in, pocket, segment): nothing panics,
// and every refusal is a client error, never an internal one.
func FuzzAppUserBodies(f *testing.F) {
	for _, s := range []string{
		`{"appId":2,"devices":[{"platform":"ios","token":"c123"}],"tags":[{"id":"56deeb7e669aee2a00bc82ec","name":"Platform Name","value":"ios"},` +
			`{"name":"female","value":"true","tagType":{"id":"t1"}}],"customerId":1,"alias":"anonymous-citlcgo4d01cv1hqrmfwlujak","createdAt":1474972364317,"id":"57ea4acc1de50500358d00c0"}`,
		`{"email":"a@b.c","replaceTokens":false,"devices":[{"platform":1}],"tags":[null],"blah":1}`,
		`{"auth":{"network":"halo","email":"a@b.c","password":"secret12","deviceId":"d1"},"profile":{"name":"Ann","surname":"Lee","displayName":"Ann L","photoUrl":"http://x"}}`,
		`{"data":{"a":1,"b":[true]},"references":{"fav":["i1","i2"],"old":null}}`,
		`{"appId":"a1","tags":[{"name":"Platform Name","value":"android"}],"mode":"total","pagination":{"page":2,"limit":10}}`,
		`{"appId":1,"search":"ann","pagination":{"page":"x"}}`, `{}`, `[]`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) { fuzztest.ClientError(t, what, err) }
		req := func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/api/segmentation/appuser", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		}
		decode := func(v any) error { return httpapi.DecodeFrom(bytes.NewReader(body), v) }
		b, err := readAppUserBody(req())
		check("readAppUserBody", err)
		if err == nil {
			_, err = appuser.Create(appuser.AppUser{}, "u1", "a1", "alias", b.Profile, func() string { return "t1" })
			check("appuser.Create", err)
		}
		a, err := readLogin(req())
		check("readLogin", err)
		if err == nil {
			check("appuser.CheckCredentials", appuser.CheckCredentials(a.Email, a.Password))
		}
		var rb registerBody
		check("registerBody", decode(&rb))
		var pb pocketBody
		check("pocketBody", decode(&pb))
		var sb segmentBody
		if err := decode(&sb); err == nil {
			for _, tag := range sb.Tags {
				_, err := httpapi.TagBody(tag).Tag()
				check("segment tag", err)
			}
			_, _, err = httpapi.ListPage(sb.Pagination)
			check("segment pagination", err)
		}
		var ib identifiedSearchBody
		if err := decode(&ib); err == nil {
			_, _, err = httpapi.ListPage(ib.Pagination)
			check("identified search pagination", err)
		}
	})
}

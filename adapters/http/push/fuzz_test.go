package push

import (
	"bytes"
	"testing"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
	"github.com/halocms/halocms/domain/push"
)

// FuzzPushBodies feeds arbitrary bytes to the push context's body types and
// what turns a schedule into its validated spec (for every target kind) and
// records activity: nothing panics, and every refusal is a client error,
// never an internal one.
func FuzzPushBodies(f *testing.F) {
	for _, s := range []string{
		`{"appId":1,"name":"Sale","sendOn":1700000000000,"filterTags":[{"name":"Platform Name","value":"android"}],"tagMode":"any",` +
			`"payload":{"notification":{"title":"Hi","body":"Sale","badge":"1","image":{"url":"http://x/y.png","layout":"expanded"}},` +
			`"data":{"url":"http://x","content_available":true,"extra":"{\"k\":1}","custom":{"a":"b"}}}}`,
		`{"appId":"a1","name":"Hello","aliases":["myalias"],"notification":{"title":"t","body":"b","image":"{\"url\":\"http://x\",\"layout\":\"expanded\"}","extra":{"n":1.5},"silent":true,"badge":3}}`,
		`{"name":"x","identified":["u1"],"notification":{},"payload":{}}`,
		`{"device":"myalias","schedule":"mypushId","action":"open"}`,
		`{"name":"x","sendOn":"1e400","payload":{"notification":{"tag":"t","title-loc-args":[]}}}`, `{}`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	now := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) { fuzztest.ClientError(t, what, err) }
		var b pushBody
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &b); err != nil {
			check("pushBody", err)
		} else {
			for _, kind := range []targetKind{anyTarget, aliasesTarget, identifiedTarget} {
				sp, err := b.spec(kind)
				check("pushBody.spec", err)
				if err == nil {
					_, err = push.ValidateSpec(sp, now)
					check("push.ValidateSpec", err)
				}
			}
		}
		var a activityJSON
		check("activityJSON", httpapi.DecodeFrom(bytes.NewReader(body), &a))
	})
}

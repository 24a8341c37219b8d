package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
	"github.com/halocms/halocms/domain/analytics"
)

// FuzzEventBody feeds arbitrary bytes to a report's body and what turns it
// into a recorded event: nothing panics, every refusal is a client error,
// never an internal one, and what is accepted has a type of 1 to 4.
func FuzzEventBody(f *testing.F) {
	for _, s := range []string{
		`{"type":"1","coord":"3,3","extra":{"prevRoom":"2C","roomName":"2B"}}`,
		`{"type":"4","coord":"52.37,4.89"}`, `{"type":2,"coord":null,"extra":null}`,
		`{"type":"1","extra":{"a":{"b":{"c":[1,2,{"d":true}]}}}}`,
		`{"type":"3","clientId":"x","appId":2,"customerId":1,"category":"MOB_APP","clientType":"app","ip":"1.2.3.4"}`,
		`{"type":"1","extra":{"s":"a\u0000"}}`, `{"type":"1","extra":{"n":1e999}}`, `{"type":"5"}`, `{"coord":"91,0"}`, `{"type":"1","extra":[]}`, `{}`, ``, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	at := time.Unix(1700000000, 0)
	f.Fuzz(func(t *testing.T, body []byte) {
		var b eventBody
		err := httpapi.DecodeFrom(bytes.NewReader(body), &b)
		var rep analytics.Report
		if err == nil {
			rep, err = b.report()
		}
		if err != nil {
			fuzztest.ClientError(t, fmt.Sprintf("%q", body), err)
			return
		}
		ev, err := analytics.Record(rep, "app-1", "identified:u1", "127.0.0.1", at)
		if err != nil {
			t.Fatalf("%q: a checked report is refused: %v", body, err)
		}
		if ev.Type < 1 || ev.Type > 4 || ev.Extra == nil || len(ev.Coord) > analytics.MaxCoordLength {
			t.Fatalf("%q: recorded %+v", body, ev)
		}
		// What is recorded can be stored: PostgreSQL's jsonb holds no NUL.
		if j, err := json.Marshal(ev); err != nil || hasNUL(ev.Extra) {
			t.Fatalf("%q: recorded %s (%v), which the store refuses", body, j, err)
		}
	})
}

// hasNUL reports whether a decoded JSON value holds a NUL in a string or
// a member name.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	}
	return false
}

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
)

// An app's number (HALO's integer appId) is a positive 32-bit integer:
// numbers outside that range, sent as a JSON number or as a string, are a
// 400 naming the field on every route that takes an app's number, and
// change nothing (they once were a 500, or, past 2^63, an empty list).
func TestOutOfRangeAppNumberIs400(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	ts.createApp("Numbers App") // app 1 exists: the numbers around it do not
	numbers := []string{"0", "-1", "2147483648", "9007199254740993", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "99999999999999999999"}
	note := map[string]any{"title": "t"}
	type route struct {
		name, method, path, field string
		body                      func(v json.RawMessage) map[string]any // nil: a query parameter
	}
	routes := []route{
		{"push to tags", "POST", pushPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "name": "n", "filterTags": []any{map[string]any{"name": "lang", "value": "de"}}, "notification": note}
		}},
		{"push to aliases", "POST", pushToAliasesPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "name": "n", "aliases": []string{"anonymous-x"}, "notification": note}
		}},
		{"push to identified", "POST", pushToIdentifiedPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "name": "n", "identified": []string{"identified-x"}, "notification": note}
		}},
		{"push (authentication path)", "POST", pushDemoPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "name": "n", "filterTags": []any{map[string]any{"name": "lang", "value": "de"}}, "notification": note}
		}},
		{"define stamp card", "POST", stampCardPath, "app", func(v json.RawMessage) map[string]any {
			return map[string]any{"app": v, "name": "Coffee", "stampsNeeded": 3, "reward": "A coffee"}
		}},
		{"list stamp cards", "GET", stampCardPath, "app", nil},
		{"loyalty search", "POST", loyaltySearchPath, "app", func(v json.RawMessage) map[string]any {
			return map[string]any{"app": v}
		}},
		{"create app user", "POST", appUserPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "devices": []any{map[string]any{"platform": "android", "token": "t"}}}
		}},
		{"app user search", "POST", appUserSearchPath, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v}
		}},
		{"identified search", "POST", identifiedSearch, "appId", func(v json.RawMessage) map[string]any {
			return map[string]any{"appId": v, "search": "ann"}
		}},
	}
	before := ts.eventCount()
	for _, rt := range routes {
		for _, n := range numbers {
			var sent []json.RawMessage
			if rt.body != nil {
				sent = append(sent, json.RawMessage(n))
			}
			sent = append(sent, json.RawMessage(`"`+n+`"`))
			for _, v := range sent {
				var r response
				if rt.body == nil {
					var s string
					_ = json.Unmarshal(v, &s)
					if s == "" {
						continue
					}
					r = ts.get(rt.path+"?"+url.Values{rt.field: {s}}.Encode(), ts.admin)
				} else {
					r = ts.do(request{method: rt.method, path: rt.path, token: ts.admin, body: rt.body(v)})
				}
				msg, extra := haloErrorOf(t, r, http.StatusBadRequest)
				if extra != nil && extra["field"] != rt.field {
					t.Errorf("%s with %s: extra.field = %v, want %s (%s)", rt.name, v, extra["field"], rt.field, msg)
				}
			}
		}
	}
	if after := ts.eventCount(); after != before {
		t.Errorf("the log grew from %d to %d events", before, after)
	}
}

// eventCount counts the events in the log.
func (ts *testServer) eventCount() int {
	ts.t.Helper()
	var n int
	if err := ts.app.pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
		ts.t.Fatal(err)
	}
	return n
}

package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// With a trusted proxy in front, the client is the right-most hop of
// X-Forwarded-For that is not trusted; a malformed hop on the way is a 400
// (it once made the client's address the proxy's own).
func TestClientIPForwardedFor(t *testing.T) {
	s := &server{kit: &Kit{log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}}
	var got netip.Addr
	h := s.clientIP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = ClientIP(r.Context()) }))
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string // "": a 400
	}{
		{"no header", "10.0.0.1:4000", nil, "10.0.0.1"},
		{"a blank header", "10.0.0.1:4000", []string{" "}, "10.0.0.1"},
		{"one hop", "10.0.0.1:4000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"through a trusted hop", "10.0.0.1:4000", []string{"203.0.113.7, 10.0.0.2"}, "203.0.113.7"},
		{"over header lines", "10.0.0.1:4000", []string{"203.0.113.7", "10.0.0.2"}, "203.0.113.7"},
		{"client-written hops to the left are not believed", "10.0.0.1:4000", []string{"10.0.0.9, 198.51.100.1, 203.0.113.7"}, "203.0.113.7"},
		{"garbage left of the client is never read", "10.0.0.1:4000", []string{"not-an-ip, 203.0.113.7"}, "203.0.113.7"},
		{"a hop with a port", "10.0.0.1:4000", []string{"203.0.113.7:5678"}, "203.0.113.7"},
		{"an IPv6 hop with a port", "10.0.0.1:4000", []string{"[2001:db8::1]:5678"}, "2001:db8::1"},
		{"a mapped IPv4 hop", "[::1]:4000", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"every hop trusted", "10.0.0.1:4000", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"a malformed right-most hop", "10.0.0.1:4000", []string{"not-an-ip"}, ""},
		{"unknown", "10.0.0.1:4000", []string{"203.0.113.7, unknown"}, ""},
		{"a malformed hop behind a trusted one", "10.0.0.1:4000", []string{"203.0.113.7, garbage, 10.0.0.2"}, ""},
		{"an empty hop", "10.0.0.1:4000", []string{"203.0.113.7, , 10.0.0.2"}, ""},
		{"a trailing comma", "10.0.0.1:4000", []string{"203.0.113.7,"}, ""},
		{"a CIDR", "10.0.0.1:4000", []string{"203.0.113.0/24"}, ""},
		{"an untrusted peer's header is ignored", "192.0.2.1:4000", []string{"not-an-ip"}, "192.0.2.1"},
	} {
		got = netip.Addr{}
		r := httptest.NewRequest(http.MethodGet, "/api/core/user/self", nil)
		r.RemoteAddr = tc.peer
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if tc.want == "" {
			var b struct {
				Error struct {
					Status int            `json:"status"`
					Extra  map[string]any `json:"extra"`
					Type   string         `json:"type"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &b); rec.Code != http.StatusBadRequest || err != nil || b.Error.Type != "HaloError" ||
				b.Error.Extra["header"] != "X-Forwarded-For" || got.IsValid() {
				t.Errorf("%s: %d %s (handler saw %v), want a 400 naming the header, the handler not called", tc.name, rec.Code, rec.Body, got)
			}
			continue
		}
		if rec.Code != http.StatusOK || got != netip.MustParseAddr(tc.want) {
			t.Errorf("%s: %d, client %v, want %s", tc.name, rec.Code, got, tc.want)
		}
	}
}

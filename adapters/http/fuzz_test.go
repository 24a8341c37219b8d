package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// fuzzBody is a body with every shape the shared decoders read: scalars
// any clients send loosely, tags, pagination.
type fuzzBody struct {
	Name       string          `json:"name"`
	AppID      any             `json:"appId"`
	Count      int             `json:"count"`
	Flag       any             `json:"flag"`
	Tags       []TagBody       `json:"tags"`
	Pagination *PaginationBody `json:"pagination"`
	Values     map[string]any  `json:"values"`
}

// FuzzDecoders feeds arbitrary bytes to the shared body decoders (Decode,
// DecodeOptional) and what reads their loose values (FlexInt, FlexBool,
// TagsFromBody, ListPage, AppNumberOf), and arbitrary text to the query
// readers (PageParams, ParseMoment): nothing panics, and every refusal
// maps through errorBody to a 4xx.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"name":"News","appId":"1","tags":[{"name":"Platform Name","value":"android","tagType":{"id":"t1"}}],"pagination":{"page":1,"limit":10,"skip":false}}`,
		`{"appId": 2147483648, "flag": "true", "pagination": {"page": "2", "limit": 1e3}}`,
		`{"appId": "000000000000000000000001", "values": {"a": [1, {"b": null}]}}`,
		`{"tags": [{"value": 1.5}, {"value": true}, {"value": [1]}]}`,
		`{"count": 9223372036854775808}`, `{} {}`, ``, ` `, `null`, `[]`, `{"unknown": 1}`, "\x00", `{"name":"\ud800"}`,
	} {
		f.Add([]byte(s), "1", "10", "1700000000000")
	}
	f.Fuzz(func(t *testing.T, body []byte, page, limit, moment string) {
		r := httptest.NewRequest(http.MethodPost, "/x?"+url.Values{"page": {page}, "limit": {limit}}.Encode(), bytes.NewReader(body))
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			if b := errorBody(r, slog.New(slog.DiscardHandler), storeErrors{}, err); b.Status < 400 || b.Status >= 500 {
				t.Fatalf("%s: %v answers %d, want a 4xx", what, err, b.Status)
			}
		}
		var b fuzzBody
		err := Decode(r, &b)
		check("Decode", err)
		if err == nil {
			_, err = FlexBool(b.Flag, "flag")
			check("FlexBool", err)
			_, err = TagsFromBody(b.Tags)
			check("TagsFromBody", err)
			_, _, err = ListPage(b.Pagination)
			check("ListPage", err)
			if s, ok := b.AppID.(string); ok {
				_, _, err = AppNumberOf(s, false, "appId")
				check("AppNumberOf", err)
			}
			_, _, err = AppNumberOf(ToString(b.AppID), true, "appId")
			check("AppNumberOf", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var v any
		check("DecodeOptional", DecodeOptional(r, &v))
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(body)), 64)
		check("Decode (bounded)", Decode(r, &b))
		_, _, err = PageParams(r)
		check("PageParams", err)
		_, err = ParseMoment(moment, "since")
		check("ParseMoment", err)
		_, err = FlexInt(v, "page", 1)
		check("FlexInt", err)
	})
}

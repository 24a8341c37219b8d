package content

import (
	"bytes"
	"encoding/json"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
)

// jsonb's text as PostgreSQL writes it (a space after each : and ,), with
// the characters encoding/json escapes in strings, escapes of its own and
// nesting.
var rawValues = []string{
	`{}`,
	`{"a": 1}`,
	`{"title": "Hello <b>World</b> & co", "price": 12.50, "tags": ["x", "y"], "on": true, "none": null}`,
	`{"q": "say \"hi\" \\ <now>", "nl": "a\nb\tc", "u": "\u0001 é ü 日本", "ls": "line sep ` + "\u2028" + ` para sep ` + "\u2029" + `"}`,
	`{"nested": {"deep": [{"k": "v > w"}, [], {}], "n": -1.5e+10}, "empty": ""}`,
	` [ 1 , "2" , { "three" : 3 } ] `,
	`"just a string with a \\ backslash at the end\\"`,
}

func TestAppendCompactIsEncodingJSONs(t *testing.T) {
	for _, raw := range rawValues {
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := appendCompact([]byte("prefix"), []byte(raw)); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("appendCompact(%s)\n got %s\nwant prefix%s", raw, got, want)
		}
	}
}

func TestEncodeAnswerIsJSONEncoders(t *testing.T) {
	updated, by, ext := int64(1700000000001), "Bob <admin>", "ext-1"
	var items []instanceJSON
	for i, raw := range rawValues {
		items = append(items, instanceJSON{ID: "id", Module: "m", Name: `name "with" ,"values":0,"tags": inside`,
			Values: json.RawMessage(raw), Tags: []httpapi.TagJSON{{ID: "t", Name: "n", Value: "v", TagType: "tt"}},
			CreatedAt: int64(i), UpdatedAt: &updated, UpdatedBy: &by, ExternalID: &ext, CustomerID: 1, Revision: 3})
	}
	// Values decoded (a locale, a projection or included relations) go
	// through encoding/json as before.
	decoded := []instanceJSON{{ID: "decoded", Name: "n", Values: map[string]any{"a": "<b>", "values": 0}, Tags: []httpapi.TagJSON{}},
		{ID: "decoded2", Name: "n", Values: map[string]any{}, Tags: []httpapi.TagJSON{}}}
	page := httpapi.Pagination(2, 20, 45)
	for _, c := range []struct {
		name  string
		page  *httpapi.PaginationJSON
		items []instanceJSON
	}{
		{"page", &page, items},
		{"bare list (skip)", nil, items},
		{"empty page", &page, []instanceJSON{}},
		{"decoded values", &page, decoded},
	} {
		var answer any = c.items
		if c.page != nil {
			answer = map[string]any{"pagination": c.page, "items": c.items}
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(answer); err != nil {
			t.Fatal(err)
		}
		got, err := encodeAnswer(c.items, c.page)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want.Bytes())
		}
	}
}

// BenchmarkEncodeAnswer: a page of twenty items with 1 KB of values each,
// encodeAnswer against json.Encoder.
func BenchmarkEncodeAnswer(b *testing.B) {
	vals := `{"url": "https://example.com/p/1", "body": "` + string(bytes.Repeat([]byte("lorem ipsum dolor "), 50)) +
		`", "brand": "Brand 01", "color": "#8a3ed3", "price": 12.5, "stock": 42, "title": "Product 1 amber birch"}`
	items := make([]instanceJSON, 20)
	for i := range items {
		items[i] = instanceJSON{ID: "6b01b89d727658df2d7951c8", Module: "6b01b89d727658df2d7951c9", Name: "Product 1",
			Values: json.RawMessage(vals), Tags: []httpapi.TagJSON{}, CreatedAt: 1700000000000}
	}
	page := httpapi.Pagination(1, 20, 29)
	b.Run("encodeAnswer", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeAnswer(items, &page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Encoder", func(b *testing.B) {
		for b.Loop() {
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(map[string]any{"pagination": page, "items": items}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestIfMatch(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   int64 // -1: no revision
		bad    bool
	}{
		{nil, -1, false},
		{[]string{`*`}, -1, false},
		{[]string{` * `}, -1, false},
		{[]string{`"0"`}, 0, false},
		{[]string{`"42"`}, 42, false},
		{[]string{`W/"7"`}, 7, false},
		{[]string{` "7" `}, 7, false},
		{[]string{`7`}, 0, true},
		{[]string{`""`}, 0, true},
		{[]string{`"-1"`}, 0, true},
		{[]string{`"+1"`}, 0, true},
		{[]string{`"a"`}, 0, true},
		{[]string{`"1", "2"`}, 0, true},
		{[]string{`"1"`, `"2"`}, 0, true},
		{[]string{`w/"1"`}, 0, true},
		{[]string{`"99999999999999999999"`}, 0, true},
	} {
		r := httptest.NewRequest("PUT", "/", nil)
		for _, v := range tc.header {
			r.Header.Add("If-Match", v)
		}
		got, err := IfMatch(r)
		switch {
		case tc.bad:
			if !fault.Is(err, fault.Invalid) {
				t.Errorf("If-Match %q: %v, %v; want a 400", tc.header, got, err)
			}
		case err != nil:
			t.Errorf("If-Match %q: %v", tc.header, err)
		case tc.want < 0 && got != nil:
			t.Errorf("If-Match %q: revision %d, want none", tc.header, *got)
		case tc.want >= 0 && (got == nil || *got != tc.want):
			t.Errorf("If-Match %q: %v, want %d", tc.header, got, tc.want)
		}
	}
	if ETag(3) != `"3"` {
		t.Errorf("ETag(3) = %s", ETag(3))
	}
}

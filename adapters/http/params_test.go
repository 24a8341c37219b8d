package httpapi

import (
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestAppNumberOf(t *testing.T) {
	cases := []struct {
		raw    string
		number bool
		n      int
		ok     bool
		bad    bool
	}{
		{raw: "1", number: true, n: 1, ok: true},
		{raw: "7", n: 7, ok: true},
		{raw: "2147483647", n: 2147483647, ok: true},
		{raw: "6b0b446022869755047bd668"}, // an id
		{raw: "123456789012345678901234"}, // an id of digits only
		{raw: "1.5"},                      // a string that is no numeral is an id
		{raw: "0", bad: true},             // apps are numbered from 1
		{raw: "-1", number: true, bad: true},
		{raw: "2147483648", bad: true},
		{raw: "9007199254740993", number: true, bad: true},
		{raw: "9223372036854775807", bad: true},
		{raw: "-9223372036854775808", bad: true},
		{raw: "9223372036854775808", bad: true},
		{raw: "+9223372036854775808123456", bad: true},
		{raw: "123456789012345678901234", number: true, bad: true},
		{raw: "1e3", number: true, bad: true},
		{raw: "1.5", number: true, bad: true},
		{raw: "+-1"}, // no numeral: an id (which no app has)
	}
	for _, c := range cases {
		n, ok, err := AppNumberOf(c.raw, c.number, "appId")
		if c.bad {
			if !fault.Is(err, fault.Invalid) || !ok {
				t.Errorf("%q (number %v): got %d %v %v, want a 400 naming appId", c.raw, c.number, n, ok, err)
			}
			continue
		}
		if err != nil || n != c.n || ok != c.ok {
			t.Errorf("%q (number %v): got %d %v %v, want %d %v", c.raw, c.number, n, ok, err, c.n, c.ok)
		}
	}
}

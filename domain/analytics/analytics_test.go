package analytics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

func TestParseCoord(t *testing.T) {
	for _, ok := range []string{"", "3,3", "52.37,4.89", "-90,180", " 1.5 , -2 "} {
		if c, err := ParseCoord(ok); err != nil || c.String() != ok {
			t.Errorf("%q: %v %q", ok, err, c)
		}
	}
	for _, bad := range []string{"3", "a,b", "91,0", "0,181", "NaN,0", "Inf,0", "1,2,3", "1," + strings.Repeat("0", 70)} {
		if _, err := ParseCoord(bad); !fault.Is(err, fault.Invalid) {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
}

func TestCheckExtra(t *testing.T) {
	nest := func(n int) map[string]any {
		m := map[string]any{}
		for i := 1; i < n; i++ {
			m = map[string]any{"x": m}
		}
		return m
	}
	if err := CheckExtra(nest(MaxExtraDepth)); err != nil {
		t.Errorf("depth %d: %v", MaxExtraDepth, err)
	}
	if err := CheckExtra(nest(MaxExtraDepth + 1)); !fault.Is(err, fault.Invalid) {
		t.Errorf("depth %d: %v, want invalid", MaxExtraDepth+1, err)
	}
	many := []any{}
	for i := 0; i < MaxExtraValues; i++ {
		many = append(many, float64(i))
	}
	if err := CheckExtra(map[string]any{"l": many}); !fault.Is(err, fault.Invalid) {
		t.Errorf("%d values: %v, want invalid", MaxExtraValues+1, err)
	}
	if err := CheckExtra(map[string]any{"l": many[1:]}); err != nil {
		t.Errorf("%d values: %v", MaxExtraValues, err)
	}
	for _, bad := range []map[string]any{{"s": "a\x00b"}, {"a\x00b": true}, {"n": json.Number("1e999")}, {"n": json.Number("x")}} {
		if err := CheckExtra(bad); !fault.Is(err, fault.Invalid) {
			t.Errorf("%q: %v, want invalid", bad, err)
		}
	}
	if err := CheckExtra(map[string]any{"n": json.Number("-1.5e300"), "s": "ü"}); err != nil {
		t.Errorf("a number and a string: %v", err)
	}
	if err := CheckExtra(map[string]any{"t": time.Now()}); !fault.Is(err, fault.Invalid) {
		t.Errorf("a value of another kind: %v, want invalid", err)
	}
}

func TestStreamSpreadsAndKeepsADevice(t *testing.T) {
	at := time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC)
	if a, b := Stream("app", at, "identified:u1", "s1"), Stream("app", at, "identified:u1", "s2"); a != b {
		t.Errorf("one device, two streams: %s %s", a, b)
	}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		s := Stream("app", at, "", strings.Repeat("x", i))
		if !strings.HasPrefix(s, "analytics-app-20261129-") {
			t.Fatalf("stream %s", s)
		}
		seen[s] = true
	}
	if len(seen) < Shards/2 {
		t.Errorf("1000 reports without a device spread over %d streams", len(seen))
	}
}

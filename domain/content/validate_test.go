package content

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func ptr[T any](v T) *T { return &v }

// typeID returns the id of the catalog's field type with that name.
func typeID(t testing.TB, name string) string {
	t.Helper()
	for _, ft := range FieldTypes {
		if ft.Name == name {
			return ft.ID
		}
	}
	t.Fatalf("no field type named %q", name)
	return ""
}

// expectViolation checks that vs is exactly one violation of field with code.
func expectViolation(t *testing.T, vs []Violation, field, code string) {
	t.Helper()
	if len(vs) != 1 {
		t.Fatalf("want exactly one violation %s on %q, got %+v", code, field, vs)
	}
	if vs[0].Field != field || vs[0].Error != code {
		t.Fatalf("want violation {Field:%q Error:%q}, got {Field:%q Error:%q Rule:%q Message:%q}",
			field, code, vs[0].Field, vs[0].Error, vs[0].Rule, vs[0].Message)
	}
	if vs[0].Message == "" || vs[0].Rule == "" {
		t.Fatalf("violation %+v lacks a rule or a message", vs[0])
	}
}

func expectValid(t *testing.T, vs []Violation) {
	t.Helper()
	if len(vs) != 0 {
		t.Fatalf("want no violation, got %+v", vs)
	}
}

func TestFieldTypeCatalog(t *testing.T) {
	if len(FieldTypes) != 21 {
		t.Fatalf("the catalog has %d types, want 21", len(FieldTypes))
	}
	for i, ft := range FieldTypes {
		want := "0000000000000000000000"
		if i+1 < 10 {
			want += "0"
		}
		want += itoa(i + 1)
		if ft.ID != want || len(ft.ID) != 24 {
			t.Errorf("type %d (%s) has id %q, want %q", i+1, ft.Name, ft.ID, want)
		}
		got, ok := FieldTypeByID(ft.ID)
		if !ok || got.Name != ft.Name {
			t.Errorf("FieldTypeByID(%q) = %v, %v", ft.ID, got.Name, ok)
		}
	}
	if _, ok := FieldTypeByID("000000000000000000000022"); ok {
		t.Error("FieldTypeByID found a 22nd type")
	}
	if got := FieldTypes[9].ID; got != "000000000000000000000010" {
		t.Errorf("type 10 id = %q", got)
	}
}

type valueCase struct {
	value any
	code  string // "" for a valid value
}

// TestValidateValuesPerFieldType checks every one of the 21 field types
// with valid values and invalid ones, asserting the exact error code and
// field name.
func TestValidateValuesPerFieldType(t *testing.T) {
	choices := []string{"a", "b", "c"}
	cases := map[string][]valueCase{
		"Text": {
			{"hello", ""},
			{strings.Repeat("é", 1000), ""}, // 1000 characters, 2000 bytes
			{5, ErrString},
			{true, ErrString},
			{[]any{"x"}, ErrString},
			{strings.Repeat("a", 1001), ErrLength},
		},
		"Number": {
			{json.Number("3.5"), ""},
			{json.Number("-12"), ""},
			{json.Number("9007199254740993"), ""},
			{float64(2.25), ""},
			{int(7), ""},
			{int64(1) << 60, ""},
			{"3", ErrNumber},
			{json.Number("abc"), ErrNumber},
			{math.NaN(), ErrNumber},
			{math.Inf(1), ErrNumber},
			{true, ErrNumber},
			{map[string]any{}, ErrNumber},
		},
		"Website": {
			{"https://example.com/a?b=c", ""},
			{"http://example.com", ""},
			{"ftp://example.com/x", ErrURL},
			{"example.com", ErrURL},
			{"https://", ErrURL},
			{"http://exa mple.com", ErrURL},
			{"https://example.com/a b", ErrURL},
			{5, ErrURL},
		},
		"Youtube": {
			{"https://www.youtube.com/watch?v=dQw4w9WgXcQ", ""},
			{"youtu.be/dQw4w9WgXcQ", ""},
			{"https://m.youtube.com/watch?v=x", ""},
			{"https://vimeo.com/123", ErrYoutube},
			{"https://youtube.com/", ErrYoutube},
			{3, ErrYoutube},
		},
		"Image": {
			{"https://cdn.example.com/a.png", ""},
			{"/a.png", ErrURL},
			{"data:image/png;base64,AAAA", ErrURL},
		},
		"Date": {
			{json.Number("1700000000000"), ""},
			{float64(0), ""},
			{int(5), ""},
			{int64(-86400000), ""},
			{json.Number("1.5"), ErrTimestamp},
			{json.Number("8640000000000000"), ""},
			{json.Number("-8640000000000000"), ""},
			{json.Number("8640000000000001"), ErrTimestamp},
			{json.Number("1.5e20"), ErrTimestamp},
			{"2024-01-01", ErrTimestamp},
			{true, ErrTimestamp},
		},
		"Time": {
			{int(3600000), ""},
			{json.Number("43200000"), ""},
			{float64(1.25), ErrTimestamp},
			{"12:00", ErrTimestamp},
		},
		"Boolean": {
			{true, ""},
			{false, ""},
			{"true", ErrBoolean},
			{1, ErrBoolean},
			{json.Number("0"), ErrBoolean},
		},
		"Color": {
			{"#abc", ""},
			{"#A1B2C3", ""},
			{"#abcd", ErrColor},
			{"red", ErrColor},
			{"#ggg", ErrColor},
			{"abc123", ErrColor},
			{0xffffff, ErrColor},
		},
		"Multiple relation": {
			{[]any{"5f1e2d3c4b5a69788796a5b4", "imported_id-1"}, ""},
			{[]any{}, ""},
			{"5f1e2d3c4b5a69788796a5b4", ErrRelation},
			{[]any{1}, ErrRelation},
			{[]any{"ok", "not an id"}, ErrRelation},
			{[]any{""}, ErrRelation},
			{[]string{"abc"}, ErrRelation},
		},
		"Single relation": {
			{"5f1e2d3c4b5a69788796a5b4", ""},
			{"short_id", ""},
			{7, ErrString},
			{"bad id!", ErrString},
			{strings.Repeat("a", 65), ErrString},
			{[]any{"abc"}, ErrString},
		},
		"Long text": {
			{strings.Repeat("a", 5000), ""},
			{1, ErrString},
			{map[string]any{"en": "x"}, ErrString},
		},
		"Object": {
			{map[string]any{"a": json.Number("1"), "b": []any{}}, ""},
			{map[string]any{}, ""},
			{[]any{}, ErrObject},
			{"{}", ErrObject},
		},
		"List": {
			{[]any{json.Number("1"), "a", map[string]any{}}, ""},
			{[]any{}, ""},
			{map[string]any{}, ErrArray},
			{"[]", ErrArray},
		},
		"Localized text": {
			{map[string]any{"en-US": "x", "nl": "y", "pt_BR": "z"}, ""},
			{map[string]any{}, ""},
			{"x", ErrObject},
			{[]any{"x"}, ErrObject},
			{map[string]any{"english!": "x"}, ErrLanguages},
			{map[string]any{"e": "x"}, ErrLanguages},
			{map[string]any{"en-US": json.Number("5")}, ErrLocalized},
			{map[string]any{"en-US": nil}, ErrLocalized},
		},
		"Video": {
			{"https://v.example.com/a.mp4", ""},
			{"rtmp://v.example.com/a", ErrURL},
		},
		"Multiple choice": {
			{[]any{"a", "c"}, ""},
			{[]any{}, ""},
			{[]any{"a", "a"}, ErrChoices},
			{[]any{"z"}, ErrChoices},
			{[]any{json.Number("1")}, ErrChoices},
			{"a", ErrChoices},
		},
		"Single choice": {
			{"b", ""},
			{"z", ErrChoice},
			{"A", ErrChoice},
			{json.Number("1"), ErrChoice},
			{[]any{"a"}, ErrChoice},
		},
		"Multiple select dropdown": {
			{[]any{"b"}, ""},
			{[]any{"b", "c", "b"}, ErrChoices},
			{[]any{"d"}, ErrChoices},
		},
		"Single select dropdown": {
			{"c", ""},
			{"d", ErrChoice},
			{true, ErrChoice},
		},
		"Audio": {
			{"https://a.example.com/x.mp3", ""},
			{"mailto:x@example.com", ErrURL},
			{"", ErrURL},
		},
	}
	for _, ft := range FieldTypes {
		cs, ok := cases[ft.Name]
		if !ok {
			t.Errorf("no cases for field type %s", ft.Name)
			continue
		}
		hasValid, hasInvalid := false, false
		for _, c := range cs {
			if c.code == "" {
				hasValid = true
			} else {
				hasInvalid = true
			}
		}
		if !hasValid || !hasInvalid {
			t.Errorf("field type %s needs valid and invalid cases", ft.Name)
		}
		t.Run(ft.Name, func(t *testing.T) {
			f := Field{Name: "f_" + ft.ID[20:], Type: ft.ID}
			if ft.Kind == KindChoice || ft.Kind == KindChoices {
				f.Rules.Values = choices
			}
			for _, c := range cs {
				vs := ValidateValues([]Field{f}, map[string]any{f.Name: c.value})
				if c.code == "" {
					if len(vs) != 0 {
						t.Errorf("%s: %#v: want valid, got %+v", ft.Name, c.value, vs)
					}
					continue
				}
				if len(vs) != 1 || vs[0].Field != f.Name || vs[0].Error != c.code {
					t.Errorf("%s: %#v: want one %s on %s, got %+v", ft.Name, c.value, c.code, f.Name, vs)
				}
			}
		})
	}
}

func TestNumberReadsJSONNumbersFloatsAndIntegers(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{json.Number("2.5"), 2.5, true},
		{json.Number("9007199254740993"), 9007199254740992, true},
		{float64(-1), -1, true},
		{float32(0.5), 0.5, true},
		{int(42), 42, true},
		{int64(-7), -7, true},
		{json.Number("x"), 0, false},
		{"1", 0, false},
		{nil, 0, false},
		{true, 0, false},
	} {
		got, ok := Number(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestLongIntegerAcceptedByNumberFields(t *testing.T) {
	f := Field{Name: "big", Type: typeID(t, "Number"), Rules: FieldRules{Min: ptr(0.0)}}
	expectValid(t, ValidateValues([]Field{f}, map[string]any{"big": json.Number("9007199254740993")}))
	expectValid(t, ValidateValues([]Field{f}, map[string]any{"big": json.Number("123456789012345678901234567890")}))
	expectViolation(t, ValidateValues([]Field{f}, map[string]any{"big": json.Number("-9007199254740993")}), "big", ErrRange)
	// Outside float64 range: not a number that can be compared.
	expectViolation(t, ValidateValues([]Field{f}, map[string]any{"big": json.Number("1e400")}), "big", ErrNumber)
}

func TestRequired(t *testing.T) {
	for _, typ := range []string{"Text", "Number", "Boolean", "Multiple relation", "Localized text", "Website", "Object"} {
		f := Field{Name: "req", Type: typeID(t, typ), Required: true}
		for _, vals := range []map[string]any{
			{},           // missing
			{"req": nil}, // null
			{"req": ""},  // empty string
			nil,          // no values at all
		} {
			vs := ValidateValues([]Field{f}, vals)
			expectViolation(t, vs, "req", ErrRequired)
			if vs[0].Rule != "required" {
				t.Errorf("%s %v: rule %q, want required", typ, vals, vs[0].Rule)
			}
		}
	}
	// A required boolean accepts false and a required number accepts 0.
	expectValid(t, ValidateValues([]Field{{Name: "b", Type: typeID(t, "Boolean"), Required: true}}, map[string]any{"b": false}))
	expectValid(t, ValidateValues([]Field{{Name: "n", Type: typeID(t, "Number"), Required: true}}, map[string]any{"n": json.Number("0")}))
	// A required field with a value of the wrong type reports the type error, not "required".
	expectViolation(t, ValidateValues([]Field{{Name: "n", Type: typeID(t, "Number"), Required: true}}, map[string]any{"n": "x"}), "n", ErrNumber)
}

func TestOptionalEmptyValues(t *testing.T) {
	text := Field{Name: "t", Type: typeID(t, "Text"), Rules: FieldRules{MinLength: ptr(3), Pattern: "[a-z]+"}}
	num := Field{Name: "n", Type: typeID(t, "Number")}
	// Missing and null optional values are fine whatever the rules.
	expectValid(t, ValidateValues([]Field{text, num}, map[string]any{}))
	expectValid(t, ValidateValues([]Field{text, num}, map[string]any{"t": nil, "n": nil}))
	// An empty optional text is "no value": its rules do not apply.
	expectValid(t, ValidateValues([]Field{text}, map[string]any{"t": ""}))
	// An empty string is not a number.
	expectViolation(t, ValidateValues([]Field{num}, map[string]any{"n": ""}), "n", ErrNumber)
}

func TestUnknownFields(t *testing.T) {
	fields := []Field{
		{Name: "a", Type: typeID(t, "Text")},
		{Name: "b", Type: typeID(t, "Number"), Required: true},
	}
	vs := ValidateValues(fields, map[string]any{"a": 1, "zz": "x", "A": "y", "c": nil})
	want := []Violation{
		{Field: "a", Error: ErrString},
		{Field: "b", Error: ErrRequired},
		{Field: "A", Error: ErrUnknown}, // field names are case-sensitive
		{Field: "zz", Error: ErrUnknown},
		// c: null is no value, of an unknown field too (a client sending
		// every key it knows, an item holding null for a field removed
		// since); item writes drop it (WithoutUnknownNulls).
	}
	if len(vs) != len(want) {
		t.Fatalf("got %+v, want %+v", vs, want)
	}
	for i := range want {
		if vs[i].Field != want[i].Field || vs[i].Error != want[i].Error {
			t.Errorf("violation %d = {%s %s}, want {%s %s}", i, vs[i].Field, vs[i].Error, want[i].Field, want[i].Error)
		}
	}
	if vs[2].Rule != "knownField" {
		t.Errorf("unknown field rule = %q", vs[2].Rule)
	}
	// No fields at all: every value is unknown.
	expectViolation(t, ValidateValues(nil, map[string]any{"x": 1}), "x", ErrUnknown)
}

func TestLengthRulesCountCharacters(t *testing.T) {
	word := "héllo" // 5 characters, 6 bytes
	if len(word) != 6 {
		t.Fatal("test word must be 6 bytes")
	}
	check := func(r FieldRules, want string) {
		t.Helper()
		for _, typ := range []string{"Text", "Long text", "Localized text"} {
			f := Field{Name: "t", Type: typeID(t, typ), Rules: r}
			var v any = word
			if typ == "Localized text" {
				v = map[string]any{"fr-FR": word}
			}
			vs := ValidateValues([]Field{f}, map[string]any{"t": v})
			if want == "" {
				if len(vs) != 0 {
					t.Errorf("%s %+v: want valid, got %+v", typ, r, vs)
				}
				continue
			}
			if len(vs) != 1 || vs[0].Error != ErrLength || vs[0].Rule != want || vs[0].Field != "t" {
				t.Errorf("%s %+v: want %s/%s on t, got %+v", typ, r, ErrLength, want, vs)
			}
		}
	}
	check(FieldRules{MaxLength: ptr(5)}, "")
	check(FieldRules{MinLength: ptr(5)}, "")
	check(FieldRules{MinLength: ptr(5), MaxLength: ptr(5)}, "")
	check(FieldRules{MaxLength: ptr(4)}, "maxLength")
	check(FieldRules{MinLength: ptr(6)}, "minLength")

	// A Text field's own maxLength replaces the type's 1000.
	f := Field{Name: "t", Type: typeID(t, "Text"), Rules: FieldRules{MaxLength: ptr(2000)}}
	expectValid(t, ValidateValues([]Field{f}, map[string]any{"t": strings.Repeat("x", 1500)}))
	// Localized text built on a Text field keeps the 1000-character limit per locale.
	f = Field{Name: "t", Type: typeID(t, "Text"), Localized: true}
	expectValid(t, ValidateValues([]Field{f}, map[string]any{"t": map[string]any{"en": strings.Repeat("é", 1000)}}))
	expectViolation(t, ValidateValues([]Field{f}, map[string]any{"t": map[string]any{"en": strings.Repeat("é", 1001)}}), "t", ErrLength)
}

func TestPatternIsAnchoredToTheWholeValue(t *testing.T) {
	f := Field{Name: "code", Type: typeID(t, "Text"), Rules: FieldRules{Pattern: "[a-z]+"}}
	expectValid(t, ValidateValues([]Field{f}, map[string]any{"code": "abc"}))
	for _, bad := range []string{"abc1", "1abc", "ab c", "ABC"} {
		vs := ValidateValues([]Field{f}, map[string]any{"code": bad})
		expectViolation(t, vs, "code", ErrPattern)
		if vs[0].Rule != "pattern" {
			t.Errorf("rule %q", vs[0].Rule)
		}
	}
	// An alternation is anchored as a whole: ^(?:a|b)$, not ^a|b$.
	alt := Field{Name: "ab", Type: typeID(t, "Text"), Rules: FieldRules{Pattern: "a|b"}}
	expectValid(t, ValidateValues([]Field{alt}, map[string]any{"ab": "a"}))
	expectValid(t, ValidateValues([]Field{alt}, map[string]any{"ab": "b"}))
	for _, bad := range []string{"ab", "ax", "xb"} {
		expectViolation(t, ValidateValues([]Field{alt}, map[string]any{"ab": bad}), "ab", ErrPattern)
	}
	// A pattern that anchors itself still works.
	self := Field{Name: "s", Type: typeID(t, "Text"), Rules: FieldRules{Pattern: "^x+$"}}
	expectValid(t, ValidateValues([]Field{self}, map[string]any{"s": "xxx"}))
	expectViolation(t, ValidateValues([]Field{self}, map[string]any{"s": "xyx"}), "s", ErrPattern)
	// Patterns apply to URL fields too.
	u := Field{Name: "u", Type: typeID(t, "Website"), Rules: FieldRules{Pattern: `https://example\.com/.*`}}
	expectValid(t, ValidateValues([]Field{u}, map[string]any{"u": "https://example.com/a"}))
	expectViolation(t, ValidateValues([]Field{u}, map[string]any{"u": "https://other.com/https://example.com/a"}), "u", ErrPattern)
	// And to each locale of a localized text.
	l := Field{Name: "l", Type: typeID(t, "Localized text"), Rules: FieldRules{Pattern: "[A-Z].*"}}
	expectValid(t, ValidateValues([]Field{l}, map[string]any{"l": map[string]any{"en": "Hi", "nl": "Hoi"}}))
	expectViolation(t, ValidateValues([]Field{l}, map[string]any{"l": map[string]any{"en": "Hi", "nl": "hoi"}}), "l", ErrPattern)
}

func TestMinMax(t *testing.T) {
	f := Field{Name: "n", Type: typeID(t, "Number"), Rules: FieldRules{Min: ptr(1.0), Max: ptr(10.0)}}
	for _, ok := range []any{json.Number("1"), json.Number("10"), float64(5.5), int(10), json.Number("1.0")} {
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"n": ok}))
	}
	for _, c := range []struct {
		v    any
		rule string
	}{
		{json.Number("0.999"), "min"},
		{int(0), "min"},
		{float64(-3), "min"},
		{json.Number("10.0001"), "max"},
		{int(11), "max"},
	} {
		vs := ValidateValues([]Field{f}, map[string]any{"n": c.v})
		expectViolation(t, vs, "n", ErrRange)
		if vs[0].Rule != c.rule {
			t.Errorf("%v: rule %q, want %q", c.v, vs[0].Rule, c.rule)
		}
	}
	d := Field{Name: "d", Type: typeID(t, "Date"), Rules: FieldRules{Min: ptr(1000.0)}}
	expectValid(t, ValidateValues([]Field{d}, map[string]any{"d": json.Number("1000")}))
	expectViolation(t, ValidateValues([]Field{d}, map[string]any{"d": json.Number("999")}), "d", ErrRange)
}

func TestAllowedValues(t *testing.T) {
	text := Field{Name: "color", Type: typeID(t, "Text"), Rules: FieldRules{Values: []string{"red", "green"}}}
	expectValid(t, ValidateValues([]Field{text}, map[string]any{"color": "red"}))
	vs := ValidateValues([]Field{text}, map[string]any{"color": "blue"})
	expectViolation(t, vs, "color", ErrAllowed)
	if vs[0].Rule != "values" {
		t.Errorf("rule %q", vs[0].Rule)
	}
	expectViolation(t, ValidateValues([]Field{text}, map[string]any{"color": "Red"}), "color", ErrAllowed)

	num := Field{Name: "n", Type: typeID(t, "Number"), Rules: FieldRules{Values: []string{"1", "2.5"}}}
	for _, ok := range []any{json.Number("2.5"), float64(1), int(1), json.Number("2.50")} {
		expectValid(t, ValidateValues([]Field{num}, map[string]any{"n": ok}))
	}
	expectViolation(t, ValidateValues([]Field{num}, map[string]any{"n": int(3)}), "n", ErrAllowed)
	expectViolation(t, ValidateValues([]Field{num}, map[string]any{"n": json.Number("2.49")}), "n", ErrAllowed)
}

func TestMediaTypes(t *testing.T) {
	f := Field{Name: "img", Type: typeID(t, "Image"), Rules: FieldRules{MediaTypes: []string{"jpg", ".png"}}}
	for _, ok := range []string{"https://x.com/a.jpg", "https://x.com/a/b.JPG", "https://x.com/a.png?size=2#top"} {
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"img": ok}))
	}
	for _, bad := range []string{"https://x.com/a.gif", "https://x.com/a", "https://x.com/a.jpg.exe", "https://x.com/a?f=b.png"} {
		vs := ValidateValues([]Field{f}, map[string]any{"img": bad})
		expectViolation(t, vs, "img", ErrMediaType)
		if vs[0].Rule != "mediaTypes" {
			t.Errorf("rule %q", vs[0].Rule)
		}
	}
	// A bad URL is reported as such before its media type.
	expectViolation(t, ValidateValues([]Field{f}, map[string]any{"img": "a.jpg"}), "img", ErrURL)
}

func TestLocalizedText(t *testing.T) {
	for _, typ := range []string{"Localized text", "Text"} {
		f := Field{Name: "title", Type: typeID(t, typ), Localized: true}
		if f.Kind() != KindLocalized {
			t.Fatalf("%s localized: kind %v", typ, f.Kind())
		}
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"title": map[string]any{"en-US": "x"}}))
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"title": map[string]any{"en-US": "x", "nl-NL": "y", "zh_Hant_TW": "z"}}))
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"title": map[string]any{"en-US": "x", "not a locale": "y"}}), "title", ErrLanguages)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"title": map[string]any{"": "y"}}), "title", ErrLanguages)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"title": map[string]any{"en-US": true}}), "title", ErrLocalized)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"title": "x"}), "title", ErrObject)
	}
	// Without Localized, a Text field takes plain strings only.
	plain := Field{Name: "title", Type: typeID(t, "Text")}
	expectViolation(t, ValidateValues([]Field{plain}, map[string]any{"title": map[string]any{"en-US": "x"}}), "title", ErrString)
}

func TestChoices(t *testing.T) {
	for _, typ := range []string{"Multiple choice", "Multiple select dropdown"} {
		f := Field{Name: "tags", Type: typeID(t, typ), Rules: FieldRules{Values: []string{"x", "y", "z"}}}
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"tags": []any{"z", "x"}}))
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"tags": []any{"x", "y", "x"}}), "tags", ErrChoices)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"tags": []any{"x", "w"}}), "tags", ErrChoices)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"tags": "x"}), "tags", ErrChoices)
	}
	for _, typ := range []string{"Single choice", "Single select dropdown"} {
		f := Field{Name: "pick", Type: typeID(t, typ), Rules: FieldRules{Values: []string{"x", "y"}}}
		expectValid(t, ValidateValues([]Field{f}, map[string]any{"pick": "y"}))
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"pick": "w"}), "pick", ErrChoice)
		expectViolation(t, ValidateValues([]Field{f}, map[string]any{"pick": []any{"x"}}), "pick", ErrChoice)
	}
}

func TestValidateValuesReportsEveryViolationInFieldOrder(t *testing.T) {
	fields := []Field{
		{Name: "z", Type: typeID(t, "Number")},
		{Name: "a", Type: typeID(t, "Boolean")},
		{Name: "m", Type: typeID(t, "Text"), Required: true},
		{Name: "ok", Type: typeID(t, "Text")},
	}
	vs := ValidateValues(fields, map[string]any{"z": "x", "a": "x", "ok": "fine"})
	if len(vs) != 3 || vs[0].Field != "z" || vs[0].Error != ErrNumber || vs[1].Field != "a" || vs[1].Error != ErrBoolean ||
		vs[2].Field != "m" || vs[2].Error != ErrRequired {
		t.Fatalf("got %+v", vs)
	}
}

func TestViolationFault(t *testing.T) {
	v := Violation{Field: "price", Error: ErrNumber, Rule: "isNumber", Message: "must be a number"}
	err := v.Fault()
	if !fault.Is(err, fault.Invalid) {
		t.Fatalf("kind %v", fault.KindOf(err))
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatal("not a *fault.Error")
	}
	if fe.Extra["field"] != "price" || fe.Extra["error"] != ErrNumber || fe.Extra["rule"] != "isNumber" || fe.Extra["message"] != "must be a number" {
		t.Errorf("extra %v", fe.Extra)
	}
	if !strings.Contains(fe.Message, "values.price") {
		t.Errorf("message %q", fe.Message)
	}
}

// fieldsErr asserts that ValidateFields refuses fields as invalid, naming
// field (when not empty).
func fieldsErr(t *testing.T, fields []Field, field string) {
	t.Helper()
	err := ValidateFields(fields)
	if err == nil {
		t.Fatalf("ValidateFields(%+v) accepted", fields)
	}
	if !fault.Is(err, fault.Invalid) {
		t.Fatalf("ValidateFields: %v is not invalid (kind %v)", err, fault.KindOf(err))
	}
	var fe *fault.Error
	errors.As(err, &fe)
	if field != "" && fe.Extra["field"] != field {
		t.Fatalf("ValidateFields: %v names field %v, want %q", err, fe.Extra["field"], field)
	}
	if _, ok := fe.Extra["position"]; !ok {
		t.Fatalf("ValidateFields: %v has no position", err)
	}
}

func TestValidateFieldsRefusals(t *testing.T) {
	text, num := typeID(t, "Text"), typeID(t, "Number")
	ok := Field{Name: "ok", Type: text}
	cases := []struct {
		name  string
		f     Field
		field string
	}{
		{"unknown type", Field{Name: "x", Type: "000000000000000000000099"}, "x"},
		{"empty type", Field{Name: "x"}, "x"},
		{"minLength > maxLength", Field{Name: "x", Type: text, Rules: FieldRules{MinLength: ptr(5), MaxLength: ptr(2)}}, "x"},
		{"negative minLength", Field{Name: "x", Type: text, Rules: FieldRules{MinLength: ptr(-1)}}, "x"},
		{"negative maxLength", Field{Name: "x", Type: text, Rules: FieldRules{MaxLength: ptr(-1)}}, "x"},
		{"min > max", Field{Name: "x", Type: num, Rules: FieldRules{Min: ptr(10.0), Max: ptr(1.0)}}, "x"},
		{"bad regexp", Field{Name: "x", Type: text, Rules: FieldRules{Pattern: "a(b"}}, "x"},
		{"bad regexp (perl lookahead)", Field{Name: "x", Type: text, Rules: FieldRules{Pattern: "(?=a)"}}, "x"},
		{"multiple choice without values", Field{Name: "x", Type: typeID(t, "Multiple choice")}, "x"},
		{"single choice without values", Field{Name: "x", Type: typeID(t, "Single choice")}, "x"},
		{"dropdown without values", Field{Name: "x", Type: typeID(t, "Single select dropdown")}, "x"},
		{"multi dropdown without values", Field{Name: "x", Type: typeID(t, "Multiple select dropdown")}, "x"},
		{"length on a number", Field{Name: "x", Type: num, Rules: FieldRules{MaxLength: ptr(3)}}, "x"},
		{"pattern on a boolean", Field{Name: "x", Type: typeID(t, "Boolean"), Rules: FieldRules{Pattern: "a"}}, "x"},
		{"min on a text", Field{Name: "x", Type: text, Rules: FieldRules{Min: ptr(1.0)}}, "x"},
		{"max on a url", Field{Name: "x", Type: typeID(t, "Website"), Rules: FieldRules{Max: ptr(1.0)}}, "x"},
		{"values on a boolean", Field{Name: "x", Type: typeID(t, "Boolean"), Rules: FieldRules{Values: []string{"true"}}}, "x"},
		{"target module on a text", Field{Name: "x", Type: text, Rules: FieldRules{Module: "m1"}}, "x"},
		{"media types on a text", Field{Name: "x", Type: text, Rules: FieldRules{MediaTypes: []string{"jpg"}}}, "x"},
		{"media types on youtube", Field{Name: "x", Type: typeID(t, "Youtube"), Rules: FieldRules{MediaTypes: []string{"mp4"}}}, "x"},
		{"localized number", Field{Name: "x", Type: num, Localized: true}, "x"},
		{"localized boolean", Field{Name: "x", Type: typeID(t, "Boolean"), Localized: true}, "x"},
		{"bad default", Field{Name: "x", Type: num, Rules: FieldRules{Default: "ten"}}, "x"},
		{"default out of range", Field{Name: "x", Type: num, Rules: FieldRules{Min: ptr(0.0), Default: json.Number("-1")}}, "x"},
		{"default not a choice", Field{Name: "x", Type: typeID(t, "Single choice"), Rules: FieldRules{Values: []string{"a"}, Default: "b"}}, "x"},
		{"another type's widget", Field{Name: "x", Type: text, Rules: FieldRules{Widget: "richtext"}}, "x"},
		{"an unknown widget", Field{Name: "x", Type: typeID(t, "Long text"), Rules: FieldRules{Widget: "wysiwyg"}}, "x"},
		{"a widget in another case", Field{Name: "x", Type: typeID(t, "Long text"), Rules: FieldRules{Widget: "Markdown"}}, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fieldsErr(t, []Field{ok, c.f}, c.field)
			var fe *fault.Error
			errors.As(ValidateFields([]Field{ok, c.f}), &fe)
			if fe.Extra["position"] != 1 {
				t.Errorf("position %v, want 1", fe.Extra["position"])
			}
		})
	}

	// Duplicate names, case-insensitively.
	fieldsErr(t, []Field{{Name: "Title", Type: text}, {Name: "body", Type: text}, {Name: "title", Type: num}}, "title")
	fieldsErr(t, []Field{{Name: "a", Type: text}, {Name: "a", Type: text}}, "a")
	// Names: empty, surrounded by spaces, too long.
	fieldsErr(t, []Field{{Name: "", Type: text}}, "")
	fieldsErr(t, []Field{{Name: " a", Type: text}}, "")
	fieldsErr(t, []Field{{Name: strings.Repeat("n", 101), Type: text}}, "")
}

func TestValidateFieldsAccepts(t *testing.T) {
	fields := []Field{
		{Name: "title", Type: typeID(t, "Text"), Required: true, Localized: true, Rules: FieldRules{MinLength: ptr(1), MaxLength: ptr(1), Pattern: "x"}},
		{Name: "intro", Type: typeID(t, "Localized text"), Localized: true},
		{Name: "ü" + strings.Repeat("n", 99), Type: typeID(t, "Long text")},
		{Name: "price", Type: typeID(t, "Number"), Rules: FieldRules{Min: ptr(1.5), Max: ptr(1.5), Values: []string{"1.5"}, Default: json.Number("1.5")}},
		{Name: "day", Type: typeID(t, "Date"), Rules: FieldRules{Min: ptr(0.0)}},
		{Name: "site", Type: typeID(t, "Website"), Rules: FieldRules{Pattern: "https://.*", MinLength: ptr(10)}},
		{Name: "img", Type: typeID(t, "Image"), Rules: FieldRules{MediaTypes: []string{"png"}}},
		{Name: "rel", Type: typeID(t, "Single relation"), Rules: FieldRules{Module: "m1"}},
		{Name: "rels", Type: typeID(t, "Multiple relation"), Rules: FieldRules{Module: "m1"}},
		{Name: "pick", Type: typeID(t, "Single choice"), Rules: FieldRules{Values: []string{"a", "b"}, Default: "a"}},
		{Name: "picks", Type: typeID(t, "Multiple choice"), Rules: FieldRules{Values: []string{"a", "b"}, Default: []any{"b"}}},
		{Name: "color", Type: typeID(t, "Text"), Rules: FieldRules{Values: []string{"red"}}},
		{Name: "story", Type: typeID(t, "Long text"), Localized: true, Rules: FieldRules{Widget: "markdown"}},
		{Name: "when", Type: typeID(t, "Date"), Rules: FieldRules{Widget: "date"}},
	}
	if err := ValidateFields(fields); err != nil {
		t.Fatalf("ValidateFields: %v", err)
	}
	if err := ValidateFields(nil); err != nil {
		t.Fatalf("ValidateFields(nil): %v", err)
	}
}

func TestRelationIDs(t *testing.T) {
	one := Field{Name: "r", Type: typeID(t, "Single relation")}
	many := Field{Name: "rs", Type: typeID(t, "Multiple relation")}
	text := Field{Name: "t", Type: typeID(t, "Text")}
	if got := RelationIDs(one, "abc"); len(got) != 1 || got[0] != "abc" {
		t.Errorf("single: %v", got)
	}
	if got := RelationIDs(one, ""); got != nil {
		t.Errorf("single empty: %v", got)
	}
	if got := RelationIDs(many, []any{"a", 1, "b"}); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("multiple: %v", got)
	}
	if got := RelationIDs(text, "abc"); got != nil {
		t.Errorf("text: %v", got)
	}
}

// PostgreSQL stores no NUL character in jsonb or text: a value holding one,
// at any depth and in object keys too, is refused with the field named.
func TestNULCharacterRefused(t *testing.T) {
	fields := []Field{
		{Name: "title", Type: typeID(t, "Text")},
		{Name: "body", Type: typeID(t, "Long text")},
		{Name: "loc", Type: typeID(t, "Text"), Localized: true},
		{Name: "obj", Type: typeID(t, "Object")},
		{Name: "list", Type: typeID(t, "List")},
	}
	for name, c := range map[string]struct {
		field string
		value any
	}{
		"text":             {"title", "a\u0000b"},
		"long text":        {"body", "\u0000"},
		"localized text":   {"loc", map[string]any{"en-US": "ok", "nl-NL": "x\u0000"}},
		"nested in object": {"obj", map[string]any{"a": map[string]any{"b": []any{"ok", "bad\u0000"}}}},
		"object key":       {"obj", map[string]any{"k\u0000": 1}},
		"nested in list":   {"list", []any{json.Number("1"), map[string]any{"s": "\u0000"}}},
	} {
		t.Run(name, func(t *testing.T) {
			vs := ValidateValues(fields, map[string]any{c.field: c.value})
			expectViolation(t, vs, c.field, ErrNUL)
		})
	}
	expectValid(t, ValidateValues(fields, map[string]any{"title": "no nul", "obj": map[string]any{"a": []any{"x", nil, true}},
		"list": []any{"\\u0000 spelled out"}}))
}

// KeepsValues holds only where no values valid before can be refused
// after; where it says so, every values of a sample valid under the old
// fields are valid under the new ones.
func TestKeepsValues(t *testing.T) {
	five := 5
	title := Field{ID: "f1", Name: "title", Type: "000000000000000000000001", Required: true, Rules: FieldRules{MaxLength: &five}}
	price := Field{ID: "f2", Name: "price", Type: "000000000000000000000002"}
	with := func(f Field, change func(*Field)) Field { change(&f); return f }
	old := []Field{title, price}
	samples := []map[string]any{
		{"title": "short"}, {"title": "short", "price": json.Number("3")}, {"title": "abc", "price": nil},
	}
	for _, c := range []struct {
		name string
		new  []Field
		want bool
	}{
		{"the same", old, true},
		{"reordered", []Field{price, title}, true},
		{"an optional field added", []Field{title, price, {ID: "f3", Name: "note", Type: "000000000000000000000001"}}, true},
		{"required made optional", []Field{with(title, func(f *Field) { f.Required = false }), price}, true},
		{"a default and a description", []Field{with(title, func(f *Field) { f.Rules.Default = "x"; f.Description = "d" }), price}, true},
		{"a required field added", []Field{title, price, {ID: "f3", Name: "note", Type: "000000000000000000000001", Required: true}}, false},
		{"optional made required", []Field{title, with(price, func(f *Field) { f.Required = true })}, false},
		{"a field removed", []Field{title}, false},
		{"a field renamed", []Field{title, with(price, func(f *Field) { f.Name = "cost" })}, false},
		{"a type changed", []Field{title, with(price, func(f *Field) { f.Type = "000000000000000000000001" })}, false},
		{"localized", []Field{with(title, func(f *Field) { f.Localized = true }), price}, false},
		{"a rule changed", []Field{with(title, func(f *Field) { f.Rules.MaxLength = nil }), price}, false},
	} {
		if got := KeepsValues(old, c.new); got != c.want {
			t.Errorf("%s: KeepsValues = %v, want %v", c.name, got, c.want)
		}
		if !c.want {
			continue
		}
		for _, v := range samples {
			if len(ValidateValues(old, v)) == 0 && len(ValidateValues(c.new, v)) > 0 {
				t.Errorf("%s: %v valid before, refused after: %v", c.name, v, ValidateValues(c.new, v))
			}
		}
	}
}

func TestWholeMillis(t *testing.T) {
	fields := []Field{
		{Name: "when", Type: typeID(t, "Date")},
		{Name: "at", Type: typeID(t, "Time")},
		{Name: "price", Type: typeID(t, "Number")},
		{Name: "title", Type: typeID(t, "Text")},
	}
	in := map[string]any{"when": json.Number("1577836800000.9"), "at": -0.5, "price": json.Number("12.5"), "title": "x"}
	out := WholeMillis(fields, in)
	want := map[string]any{"when": json.Number("1577836800000"), "at": json.Number("-1"), "price": json.Number("12.5"), "title": "x"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("WholeMillis = %v, want %v", out, want)
	}
	if in["when"] != json.Number("1577836800000.9") || in["at"] != -0.5 {
		t.Errorf("WholeMillis changed its argument: %v", in)
	}
	// Whole dates, and values that are not numbers, come back as they are.
	for _, v := range []map[string]any{
		{"when": json.Number("1577836800000"), "price": 1.5},
		{"when": "2020-01-01", "at": true},
	} {
		if got := WholeMillis(fields, v); !reflect.DeepEqual(got, v) {
			t.Errorf("WholeMillis(%v) = %v, want it unchanged", v, got)
		}
	}
}

func TestWithoutUnknownNulls(t *testing.T) {
	fields := []Field{{Name: "a", Type: typeID(t, "Text")}}
	in := map[string]any{"a": nil, "gone": nil, "x": 1}
	out := WithoutUnknownNulls(fields, in)
	if !reflect.DeepEqual(out, map[string]any{"a": nil, "x": 1}) {
		t.Errorf("WithoutUnknownNulls = %v, want a null known field and a non-null unknown one kept", out)
	}
	if _, ok := in["gone"]; !ok {
		t.Errorf("WithoutUnknownNulls changed its argument: %v", in)
	}
	same := map[string]any{"a": "v"}
	if got := WithoutUnknownNulls(fields, same); !reflect.DeepEqual(got, same) {
		t.Errorf("WithoutUnknownNulls(%v) = %v", same, got)
	}
}

// Every field type offers editor widgets, the first its default; a
// field's widget must be one of its type's, and the refusal names the
// field and the widgets the type takes.
func TestFieldWidgets(t *testing.T) {
	seen := map[string]bool{}
	for _, ft := range FieldTypes {
		if len(ft.Widgets) == 0 {
			t.Errorf("%s: no widget", ft.Name)
		}
		for _, w := range ft.Widgets {
			seen[w] = true
			if err := ValidateFields([]Field{{Name: "f", Type: ft.ID, Rules: fieldRulesFor(ft, w)}}); err != nil {
				t.Errorf("%s with widget %q: %v", ft.Name, w, err)
			}
		}
	}
	for w := range seen {
		for _, ft := range FieldTypes {
			if slices.Contains(ft.Widgets, w) {
				continue
			}
			err := ValidateFields([]Field{{Name: "f", Type: ft.ID, Rules: fieldRulesFor(ft, w)}})
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Invalid || fe.Extra["field"] != "f" {
				t.Errorf("%s with widget %q: %v, want a 400 naming the field", ft.Name, w, err)
				continue
			}
			if !strings.Contains(fe.Message, strings.Join(ft.Widgets, ", ")) {
				t.Errorf("%s with widget %q: %q does not say which widgets the type takes", ft.Name, w, fe.Message)
			}
		}
	}
	// A widget is no rule on values: changing it checks no item.
	old := []Field{{Name: "body", Type: typeID(t, "Long text")}}
	nw := []Field{{Name: "body", Type: typeID(t, "Long text"), Rules: FieldRules{Widget: "html"}}}
	if !KeepsValues(old, nw) || !KeepsValues(nw, old) {
		t.Errorf("a widget change is taken for one that could refuse values")
	}
}

// fieldRulesFor are the rules a field of type ft needs to be valid, with
// widget w.
func fieldRulesFor(ft FieldType, w string) FieldRules {
	r := FieldRules{Widget: w}
	if ft.Kind == KindChoice || ft.Kind == KindChoices {
		r.Values = []string{"a"}
	}
	return r
}

package content

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Violation is one value that breaks a field's rules.
type Violation struct {
	Field   string // the field name
	Error   string // HALO's error code, e.g. "validator.3"
	Rule    string // the rule, e.g. "isNumber", "maxLength"
	Message string
}

// Fault turns the violation into the 400 the API answers with: extra names
// the field, the error code and the rule.
func (v Violation) Fault() error {
	return fault.Invalidf("values.%s: %s", v.Field, v.Message).
		With("field", v.Field).With("error", v.Error).With("rule", v.Rule).With("message", v.Message)
}

var (
	youtubeRE = regexp.MustCompile(youtubePattern)
	colorRE   = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	localeRE  = regexp.MustCompile(`^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$`)
)

// defaultMaxText is the Text type's isLength [0,1000] rule.
const defaultMaxText = 1000

// ValidateValues checks values against a module's fields, strictly: an
// unknown field, a missing required field, a value of the wrong type or out
// of its rules is a violation. It returns them all, in field order.
func ValidateValues(fields []Field, values map[string]any) []Violation {
	var out []Violation
	for _, f := range fields {
		v, present := values[f.Name]
		if !present || v == nil || v == "" || f.Required && empty(v) {
			if f.Required {
				out = append(out, Violation{f.Name, ErrRequired, "required", "a value is required"})
			} else if v == "" {
				if vi := validateValue(f, v); vi != nil && f.Kind() != KindText {
					out = append(out, *vi)
				}
			}
			continue
		}
		if vi := validateValue(f, v); vi != nil {
			out = append(out, *vi)
		} else if HasNUL(v) {
			out = append(out, Violation{f.Name, ErrNUL, "noNULCharacter", `must not contain a NUL character (\u0000)`})
		}
	}
	var unknown []string
	for name, v := range values {
		// null is no value: an item holding null for a field removed
		// since, or a client sending every key it knows, holds nothing
		// unknown.
		if v != nil && !slices.ContainsFunc(fields, func(f Field) bool { return f.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		out = append(out, Violation{name, ErrUnknown, "knownField", "the module has no such field"})
	}
	return out
}

// WholeMillis rounds the values of timestamp fields down to whole
// milliseconds: iOS sends dates as fractional milliseconds
// (timeIntervalSince1970 * 1000), and a date is kept to the millisecond,
// as an item's own dates are. It returns values itself when nothing
// changes, else a changed copy; values that are not numbers are left to
// ValidateValues.
func WholeMillis(fields []Field, values map[string]any) map[string]any {
	out, copied := values, false
	for _, f := range fields {
		if f.Kind() != KindTimestamp {
			continue
		}
		n, ok := Number(values[f.Name])
		if !ok || n == math.Trunc(n) || math.Abs(n) > 1<<53 {
			continue
		}
		if !copied {
			out, copied = maps.Clone(values), true
		}
		out[f.Name] = json.Number(strconv.FormatInt(int64(math.Floor(n)), 10))
	}
	return out
}

// WithoutUnknownNulls is values without the keys that name no field and
// hold null (no value): values itself when there are none, else a copy.
func WithoutUnknownNulls(fields []Field, values map[string]any) map[string]any {
	out, copied := values, false
	for name, v := range values {
		if v == nil && !slices.ContainsFunc(fields, func(f Field) bool { return f.Name == name }) {
			if !copied {
				out, copied = maps.Clone(values), true
			}
			delete(out, name)
		}
	}
	return out
}

// HasNUL reports whether a JSON-like value holds a NUL character in a
// string or an object key, at any depth. PostgreSQL can store neither in
// jsonb nor in text, so such a value is refused up front.
func HasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case []any:
		return slices.ContainsFunc(x, HasNUL)
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || HasNUL(e) {
				return true
			}
		}
	}
	return false
}

// empty reports an empty array or object: no value for a required field.
func empty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// MaxTimestamp bounds a date or time value, in epoch milliseconds either
// side of 1970: the range of a JavaScript Date, which HALO's own server
// keeps dates in. The SDKs read dates as a 64-bit long (Android) or a
// double (iOS); a larger value would fail or lose precision there.
const MaxTimestamp = 8.64e15

// Number reads a JSON number (json.Number, float64 or a Go integer).
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// validateValue checks v against f's type and rules; the first rule it
// breaks is the violation.
func validateValue(f Field, v any) *Violation {
	switch kind := f.Kind(); kind {
	case KindText:
		s, ok := v.(string)
		if !ok {
			return violation(f, ErrString, "isString", "must be a string")
		}
		return checkText(f, s)
	case KindNumber, KindTimestamp:
		return validateNumber(f, kind, v)
	case KindURL:
		return validateURL(f, v)
	case KindYoutube:
		if s, ok := v.(string); !ok || !youtubeRE.MatchString(s) {
			return violation(f, ErrYoutube, "matches", "must be a YouTube URL")
		}
	case KindBoolean:
		if _, ok := v.(bool); !ok {
			return violation(f, ErrBoolean, "isStrictBoolean", "must be true or false")
		}
	case KindColor:
		if s, ok := v.(string); !ok || !colorRE.MatchString(s) {
			return violation(f, ErrColor, "isHexColor", "must be a hex color such as #1a2b3c")
		}
	case KindRelation:
		if s, ok := v.(string); !ok || !validID(s) {
			return violation(f, ErrString, "isString", "must be the id of a content item")
		}
	case KindRelations:
		return validateRelations(f, v)
	case KindObject:
		if _, ok := v.(map[string]any); !ok {
			return violation(f, ErrObject, "isJSONObject", "must be a JSON object")
		}
	case KindList:
		if _, ok := v.([]any); !ok {
			return violation(f, ErrArray, "isJSONArray", "must be a JSON array")
		}
	case KindLocalized:
		return validateLocalized(f, v)
	case KindChoice:
		if s, ok := v.(string); !ok || !slices.Contains(f.Rules.Values, s) {
			return violation(f, ErrChoice, "singleChoiceValidator", "must be one of %s", strings.Join(f.Rules.Values, ", "))
		}
	case KindChoices:
		return validateChoices(f, v)
	default:
		return violation(f, ErrUnknown, "fieldType", "the field has an unknown type")
	}
	return nil
}

// violation is f's value breaking rule, with HALO's error code.
func violation(f Field, code, rule, format string, args ...any) *Violation {
	return &Violation{f.Name, code, rule, fmt.Sprintf(format, args...)}
}

// validateNumber checks a number, or for KindTimestamp a whole number of
// epoch milliseconds within MaxTimestamp, then the field's bounds and
// allowed values.
func validateNumber(f Field, kind Kind, v any) *Violation {
	n, ok := Number(v)
	if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
		if kind == KindTimestamp {
			return violation(f, ErrTimestamp, "isTimestamp", "must be a date in epoch milliseconds")
		}
		return violation(f, ErrNumber, "isNumber", "must be a number")
	}
	if kind == KindTimestamp && n != math.Trunc(n) {
		return violation(f, ErrTimestamp, "isTimestamp", "must be a whole number of epoch milliseconds")
	}
	if kind == KindTimestamp && math.Abs(n) > MaxTimestamp {
		return violation(f, ErrTimestamp, "isTimestamp", "must be a date between years -271821 and 275760 (at most %s epoch milliseconds either side of 1970)", fmtNum(MaxTimestamp))
	}
	r := f.Rules
	if r.Min != nil && n < *r.Min {
		return violation(f, ErrRange, "min", "must be at least %s", fmtNum(*r.Min))
	}
	if r.Max != nil && n > *r.Max {
		return violation(f, ErrRange, "max", "must be at most %s", fmtNum(*r.Max))
	}
	if len(r.Values) > 0 && !slices.ContainsFunc(r.Values, func(a string) bool {
		x, err := strconv.ParseFloat(a, 64)
		return err == nil && x == n
	}) {
		return violation(f, ErrAllowed, "values", "must be one of %s", strings.Join(r.Values, ", "))
	}
	return nil
}

// validateURL checks an absolute http or https URL, of one of the field's
// media types if it names any, then the text rules.
func validateURL(f Field, v any) *Violation {
	s, ok := v.(string)
	if !ok {
		return violation(f, ErrURL, "matches", "must be a URL string")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, " \t\n") {
		return violation(f, ErrURL, "matches", "must be an absolute http or https URL")
	}
	if types := f.Rules.MediaTypes; len(types) > 0 {
		ext := strings.TrimPrefix(strings.ToLower(path.Ext(u.Path)), ".")
		if !slices.ContainsFunc(types, func(m string) bool { return strings.EqualFold(strings.TrimPrefix(m, "."), ext) }) {
			return violation(f, ErrMediaType, "mediaTypes", "must be a file of type %s", strings.Join(types, ", "))
		}
	}
	return checkText(f, s)
}

// validateRelations checks an array of content item ids.
func validateRelations(f Field, v any) *Violation {
	arr, ok := v.([]any)
	if !ok {
		return violation(f, ErrRelation, "isRelation", "must be an array of content item ids")
	}
	for _, e := range arr {
		if s, ok := e.(string); !ok || !validID(s) {
			return violation(f, ErrRelation, "isRelation", "must be an array of content item ids")
		}
	}
	return nil
}

// validateLocalized checks an object of locale codes to texts, each text
// against the text rules.
func validateLocalized(f Field, v any) *Violation {
	m, ok := v.(map[string]any)
	if !ok {
		return violation(f, ErrObject, "isJSONObject", "must be an object of locale → text")
	}
	for loc, e := range m {
		if !localeRE.MatchString(loc) {
			return violation(f, ErrLanguages, "hasAllKeyLanguage", "%q is not a locale code such as en-US", loc)
		}
		s, ok := e.(string)
		if !ok {
			return violation(f, ErrLocalized, "allObjectValuesAreStringValidator", "the %s text must be a string", loc)
		}
		if vi := checkText(f, s); vi != nil {
			vi.Message = loc + ": " + vi.Message
			return vi
		}
	}
	return nil
}

// validateChoices checks an array of distinct values out of the field's
// allowed values.
func validateChoices(f Field, v any) *Violation {
	values := f.Rules.Values
	arr, ok := v.([]any)
	if !ok {
		return violation(f, ErrChoices, "multipleChoiceValidator", "must be an array of values out of %s", strings.Join(values, ", "))
	}
	seen := map[string]bool{}
	for _, e := range arr {
		s, ok := e.(string)
		if !ok || !slices.Contains(values, s) || seen[s] {
			return violation(f, ErrChoices, "multipleChoiceValidator", "must be an array of distinct values out of %s", strings.Join(values, ", "))
		}
		seen[s] = true
	}
	return nil
}

// checkText checks a text against the field's length, pattern and
// allowed values; a Text field without maxLength is held to
// defaultMaxText.
func checkText(f Field, s string) *Violation {
	r := f.Rules
	n := utf8.RuneCountInString(s)
	max := r.MaxLength
	if max == nil && f.Type == FieldTypes[0].ID {
		m := defaultMaxText
		max = &m
	}
	if r.MinLength != nil && n < *r.MinLength {
		return violation(f, ErrLength, "minLength", "must be at least %d characters", *r.MinLength)
	}
	if max != nil && n > *max {
		return violation(f, ErrLength, "maxLength", "must be at most %d characters", *max)
	}
	if r.Pattern != "" {
		re, err := regexp.Compile(`^(?:` + r.Pattern + `)$`)
		if err != nil || !re.MatchString(s) {
			return violation(f, ErrPattern, "pattern", "must match %s", r.Pattern)
		}
	}
	if len(r.Values) > 0 && (f.Kind() == KindText || f.Kind() == KindLocalized) && !slices.Contains(r.Values, s) {
		return violation(f, ErrAllowed, "values", "must be one of %s", strings.Join(r.Values, ", "))
	}
	return nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// validID accepts the ids items are given (24 hex characters) and the
// short ids of imported data: 1 to 64 letters, digits, '-' or '_'.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// sameValue compares two JSON-like values by their JSON form.
func sameValue(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// RelationIDs returns the item ids a value of a relation field holds.
func RelationIDs(f Field, v any) []string {
	switch f.Kind() {
	case KindRelation:
		if s, ok := v.(string); ok && s != "" {
			return []string{s}
		}
	case KindRelations:
		arr, _ := v.([]any)
		var out []string
		for _, e := range arr {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// KeepsValues reports whether every set of values valid under fields old
// is valid under fields new, for a reason that needs no look at the
// values: each old field is still there under its name, with its type,
// localization and rules (its default, widget and description aside), required
// only if it was; and the new fields are optional. A module change that
// keeps values need not check its items.
func KeepsValues(old, new []Field) bool {
	byName := make(map[string]Field, len(new))
	for _, f := range new {
		byName[f.Name] = f
	}
	rules := func(r FieldRules) FieldRules { r.Default, r.Widget = nil, ""; return r }
	for _, o := range old {
		n, ok := byName[o.Name]
		if !ok || n.Type != o.Type || n.Localized != o.Localized || n.Required && !o.Required ||
			!reflect.DeepEqual(rules(n.Rules), rules(o.Rules)) {
			return false
		}
		delete(byName, o.Name)
	}
	for _, n := range byName {
		if n.Required {
			return false
		}
	}
	return true
}

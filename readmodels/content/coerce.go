package content

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// number returns v as a decimal literal when it is a number or a numeric
// string.
func number(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), isNumber(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return number(float64(x))
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case string:
		s := strings.TrimSpace(x)
		return s, isNumber(s)
	}
	return "", false
}

// numberRE is what a decimal literal may look like (PostgreSQL's numeric
// input accepts all of it), up to maxNumber characters.
var numberRE = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,4})?$`)

const maxNumber = 1000

func isNumber(s string) bool { return len(s) <= maxNumber && numberRE.MatchString(s) }

// asInt64 reports whether a decimal literal is an integer within int64.
func asInt64(d string) (int64, bool) {
	if n, err := strconv.ParseInt(d, 10, 64); err == nil {
		return n, true
	}
	r, ok := new(big.Rat).SetString(d)
	if ok && r.IsInt() && r.Num().IsInt64() {
		return r.Num().Int64(), true
	}
	return 0, false
}

// text returns a scalar as the text content_keys stores for it.
func text(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	}
	return number(v)
}

// list returns v as a list, if it is one.
func list(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	case []json.Number:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	case []float64:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

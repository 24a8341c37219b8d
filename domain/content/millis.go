package content

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

// ParseMillis reads a date as HALO's clients send it, in epoch
// milliseconds: a number (floats too), a numeric string, or null for
// unset (the zero time). field names it in the error.
func ParseMillis(v any, field string) (time.Time, error) {
	var f float64
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return time.Time{}, fault.Invalidf("%s must be a date in epoch milliseconds", field).With("field", field)
		}
	case float64:
		f = x
	case string:
		var err error
		if f, err = strconv.ParseFloat(x, 64); err != nil {
			return time.Time{}, fault.Invalidf("%s must be a date in epoch milliseconds", field).With("field", field)
		}
	default:
		return time.Time{}, fault.Invalidf("%s must be a date in epoch milliseconds", field).With("field", field)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 253402300799999 {
		return time.Time{}, fault.Invalidf("%s is out of range", field).With("field", field)
	}
	return time.UnixMilli(int64(f)).UTC(), nil
}

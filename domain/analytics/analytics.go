// Package analytics holds the events apps report about themselves (HALO's
// "daily events": an app opened, a device registered or updated, a
// location registered) and the rules a report must meet before it is
// recorded. A report is a fact with no invariant to protect: nothing is
// loaded to decide it, only its own fields are checked.
package analytics

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Type is what happened on the device. Only the four HALO knows exist.
type Type struct{ code int }

var (
	OpenApp          = Type{1}
	RegisterDevice   = Type{2}
	UpdateDevice     = Type{3}
	RegisterLocation = Type{4}
)

// Types lists every type, in code order.
var Types = []Type{OpenApp, RegisterDevice, UpdateDevice, RegisterLocation}

// ParseType reads a type's code ("1" to "4").
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if s == t.String() {
			return t, nil
		}
	}
	return Type{}, fault.Invalidf(`type must be "1" (open app), "2" (register device), "3" (update device) or "4" (register location)`).
		With("field", "type")
}

// TypeOfCode is the type of a stored code (the zero Type for another).
func TypeOfCode(code int) Type {
	if code >= 1 && code <= len(Types) {
		return Types[code-1]
	}
	return Type{}
}

// Code is the type's number, 0 for the zero Type.
func (t Type) Code() int { return t.code }

// String is the code as HALO sends it: "1" to "4".
func (t Type) String() string { return strconv.Itoa(t.code) }

// Limits of a report. The whole body is bounded by the HTTP adapter too.
const (
	MaxCoordLength  = 64   // "lat,lon" as sent
	MaxExtraDepth   = 4    // extra itself is depth 1
	MaxExtraValues  = 64   // members and elements, at every depth
	MaxKeyLength    = 100  // bytes of a member name
	MaxStringLength = 1000 // bytes of a string value
	MaxNumberLength = 40   // characters of a number as sent
	MaxDeviceLength = 200  // bytes of a device key
)

// Coord is a position as HALO sends it ("lat,lon"), kept as sent.
type Coord struct {
	raw      string
	lat, lon float64
}

// ParseCoord reads "lat,lon" (decimal degrees; latitude -90 to 90,
// longitude -180 to 180). An empty string is no position: Coord{}.
func ParseCoord(s string) (Coord, error) {
	if s == "" {
		return Coord{}, nil
	}
	bad := fault.Invalidf(`coord must be "latitude,longitude" in decimal degrees, for example "52.37,4.89"`).With("field", "coord")
	if len(s) > MaxCoordLength {
		return Coord{}, bad
	}
	la, lo, ok := strings.Cut(s, ",")
	if !ok {
		return Coord{}, bad
	}
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(la), 64)
	lon, err2 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	if err1 != nil || err2 != nil || math.IsNaN(lat) || math.IsNaN(lon) || math.Abs(lat) > 90 || math.Abs(lon) > 180 {
		return Coord{}, bad
	}
	return Coord{raw: s, lat: lat, lon: lon}, nil
}

// String is the coord as sent ("" for none).
func (c Coord) String() string { return c.raw }

// Set reports whether there is a position.
func (c Coord) Set() bool { return c.raw != "" }

// CheckExtra bounds extra, the free object a report carries: at most
// MaxExtraDepth levels deep, MaxExtraValues values in all, member names
// and strings bounded and valid UTF-8. Its values are what a JSON decoder
// makes with UseNumber: nil, bool, string, json.Number, []any and
// map[string]any (float64 is taken as a number too).
func CheckExtra(extra map[string]any) error {
	n := 0
	return checkValue(extra, 1, &n, "extra")
}

func checkValue(v any, depth int, n *int, path string) error {
	tooDeep := func() error {
		return fault.Invalidf("extra may nest at most %d levels", MaxExtraDepth).With("field", path)
	}
	switch x := v.(type) {
	case nil, bool:
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fault.Invalidf("extra holds a number out of range").With("field", path)
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if len(x) > MaxNumberLength || err != nil || math.IsInf(f, 0) {
			return fault.Invalidf("extra's numbers must be finite doubles of at most %d characters", MaxNumberLength).With("field", path)
		}
	case string:
		if !validText(x, MaxStringLength) {
			return fault.Invalidf("extra's strings must be UTF-8 of at most %d bytes, without NUL", MaxStringLength).With("field", path)
		}
	case map[string]any:
		if depth > MaxExtraDepth {
			return tooDeep()
		}
		for k, e := range x {
			if *n++; *n > MaxExtraValues {
				return fault.Invalidf("extra may hold at most %d values", MaxExtraValues).With("field", "extra")
			}
			if !validText(k, MaxKeyLength) {
				return fault.Invalidf("extra's member names must be UTF-8 of at most %d bytes, without NUL", MaxKeyLength).With("field", path)
			}
			if err := checkValue(e, depth+1, n, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxExtraDepth {
			return tooDeep()
		}
		for i, e := range x {
			if *n++; *n > MaxExtraValues {
				return fault.Invalidf("extra may hold at most %d values", MaxExtraValues).With("field", "extra")
			}
			if err := checkValue(e, depth+1, n, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	default:
		return fault.Invalidf("extra holds a value of an unknown kind").With("field", path)
	}
	return nil
}

// validText: UTF-8 of at most max bytes, without NUL (which PostgreSQL's
// jsonb cannot hold).
func validText(s string, max int) bool {
	return len(s) <= max && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// Report is one event an app reports, checked.
type Report struct {
	Type  Type
	Coord Coord
	Extra map[string]any // never nil
}

// NewReport checks a report's fields: type required, coord optional,
// extra optional (nil is an empty object).
func NewReport(typ, coord string, extra map[string]any) (Report, error) {
	t, err := ParseType(typ)
	if err != nil {
		return Report{}, err
	}
	c, err := ParseCoord(coord)
	if err != nil {
		return Report{}, err
	}
	if extra == nil {
		extra = map[string]any{}
	}
	if err := CheckExtra(extra); err != nil {
		return Report{}, err
	}
	return Report{Type: t, Coord: c, Extra: extra}, nil
}

// Record decides the event of a report by app, from device (a device key,
// "" when the caller names none) at ip, at a time.
func Record(r Report, app, device, ip string, at time.Time) (Recorded, error) {
	if app == "" {
		return Recorded{}, fault.Forbiddenf("events are reported with an app's token (or an app user's)")
	}
	if len(device) > MaxDeviceLength {
		return Recorded{}, fault.Invalidf("device key too long")
	}
	if r.Type.Code() == 0 {
		return Recorded{}, fault.Invalidf("type is required").With("field", "type")
	}
	return Recorded{App: app, Device: device, Type: r.Type.Code(), Coord: r.Coord.String(), Extra: r.Extra, IP: ip, At: at.UTC()}, nil
}

// Day is the UTC calendar day of t, at midnight.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

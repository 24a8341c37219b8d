package httpapi

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

// BoolParam reads a true/false query parameter, def when it is absent;
// anything else is a 400.
func BoolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fault.Invalidf("%s must be true or false", name).With("field", name)
	}
	return b, nil
}

// IntParam reads a whole-number query parameter from min to max, def
// when it is absent.
func IntParam(r *http.Request, name string, def, min, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, fault.Invalidf("%s must be a whole number from %d to %d", name, min, max).With("field", name)
	}
	return n, nil
}

// PaginationJSON is the pagination of a listing's answer.
type PaginationJSON struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Offset     int `json:"offset"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

// Pagination describes page of limit items among total.
func Pagination(page, limit, total int) PaginationJSON {
	pages := 0
	if limit > 0 {
		pages = (total + limit - 1) / limit
	}
	return PaginationJSON{Page: page, Limit: limit, Offset: (page - 1) * limit, TotalItems: total, TotalPages: pages}
}

// PageParams reads the page and limit query parameters.
func PageParams(r *http.Request) (page, limit int, err error) {
	if page, err = IntParam(r, "page", 1, 1, 1<<20); err == nil {
		limit, err = IntParam(r, "limit", DefaultLimit, 1, MaxPage)
	}
	return page, limit, err
}

// DefaultLimit is a page's size when the request does not give one;
// MaxPage bounds it.
const (
	DefaultLimit = 10
	MaxPage      = 1000
)

// PaginationBody is the pagination of a listing's request body.
type PaginationBody struct {
	Page  any `json:"page"`
	Limit any `json:"limit"`
	Skip  any `json:"skip"`
}

// FlexInt reads a number or a numeric string.
func FlexInt(v any, name string, def int) (int, error) {
	switch x := v.(type) {
	case nil:
		return def, nil
	case json.Number:
		f, err := x.Float64()
		if err == nil && f == math.Trunc(f) && f >= 0 && f <= 1<<30 {
			return int(f), nil
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fault.Invalidf("pagination.%s must be a whole number", name).With("field", "pagination."+name)
}

// MaxAppNumber is the largest app number: apps are numbered 1, 2, 3... in
// a PostgreSQL integer (32 bits).
const MaxAppNumber = math.MaxInt32

// AppNumberOf reads raw, an appId a client sent, as an app's number: ok
// is false when raw is an app's id instead. A JSON number (number) is
// always a number; a string is one when it is a numeral shorter than an
// id (ids are 24 hex characters, and a few are all digits). A number that
// is not a whole one from 1 to MaxAppNumber is a 400 naming field.
func AppNumberOf(raw string, number bool, field string) (n int, ok bool, err error) {
	digits := strings.TrimLeft(raw, "+-")
	numeral := digits != "" && len(raw)-len(digits) <= 1 && strings.Trim(digits, "0123456789") == ""
	if !number && (!numeral || len(digits) == len(raw) && len(raw) >= 24) {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(raw, 10, 32)
	if !numeral || perr != nil || v < 1 {
		return 0, true, fault.Invalidf("%s must be an app's id or its number, a whole number from 1 to %d", field, MaxAppNumber).With("field", field)
	}
	return int(v), true, nil
}

// FlexBool reads a boolean or the strings "true"/"false".
func FlexBool(v any, name string) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, nil
		}
	}
	return false, fault.Invalidf("%s must be true or false", name).With("field", name)
}

// ListPage reads a listing's pagination (page from 1, limit up to MaxPage).
func ListPage(p *PaginationBody) (int, int, error) {
	page, limit := 1, DefaultLimit
	if p == nil {
		return page, limit, nil
	}
	var err error
	if page, err = FlexInt(p.Page, "page", 1); err != nil {
		return 0, 0, err
	}
	if limit, err = FlexInt(p.Limit, "limit", DefaultLimit); err != nil {
		return 0, 0, err
	}
	if page < 1 {
		page = 1
	}
	if limit < 1 || limit > MaxPage {
		return 0, 0, fault.Invalidf("pagination.limit must be from 1 to %d", MaxPage).With("field", "pagination.limit")
	}
	return page, limit, nil
}

// ParseMoment reads the query parameter field, a moment as epoch
// milliseconds or RFC 3339 (the zero time when s is empty).
func ParseMoment(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(n), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fault.Invalidf("%s must be epoch milliseconds or an RFC 3339 time", field).With("field", field)
	}
	return t, nil
}

// Package retryafter reads HTTP Retry-After headers (RFC 9110 §10.2.3),
// as the push providers send them with throttling and 5xx answers.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads a Retry-After value: delay seconds or an HTTP date.
// Missing, malformed or past values are zero.
func Parse(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

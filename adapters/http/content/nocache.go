package content

import (
	"net/http"
	"strings"
)

// noCache reports whether the client asks for a fresh answer
// (Cache-Control: no-cache or no-store); the answer is still kept.
func noCache(r *http.Request) bool {
	for _, v := range r.Header.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			if d = strings.ToLower(strings.TrimSpace(d)); d == "no-cache" || d == "no-store" {
				return true
			}
		}
	}
	return false
}

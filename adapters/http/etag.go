package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// ETag is the strong entity tag of a revision: "3".
func ETag(revision int64) string { return `"` + strconv.FormatInt(revision, 10) + `"` }

// SetETag gives the answer the entity tag of revision.
func SetETag(w http.ResponseWriter, revision int64) { w.Header().Set("ETag", ETag(revision)) }

// IfMatch reads the If-Match header as the revision the client read
// (ETag's "3"; a weak W/"3" names the same revision): nil when there is
// no If-Match or it is "*" (any current version). A value that is not
// one revision (a list of several, a tag not a whole number) is a 400.
func IfMatch(r *http.Request) (*int64, error) {
	vs := r.Header.Values("If-Match")
	if len(vs) == 0 {
		return nil, nil
	}
	v := strings.TrimSpace(strings.Join(vs, ","))
	if v == "*" {
		return nil, nil
	}
	tag := strings.TrimPrefix(v, "W/")
	if len(tag) >= 3 && tag[0] == '"' && tag[len(tag)-1] == '"' {
		digits := tag[1 : len(tag)-1]
		if n, err := strconv.ParseInt(digits, 10, 64); err == nil && n >= 0 && digits[0] != '+' {
			return &n, nil
		}
	}
	return nil, fault.Invalidf(`If-Match must be one revision as the ETag gives it ("3"), or *`).With("header", "If-Match")
}

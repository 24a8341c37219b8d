package media

import (
	"regexp"
	"strings"
)

// filePath matches where this server's URLs name a file: /media/<id>,
// then a path, a query, a fragment or the end.
var filePath = regexp.MustCompile(`/media/([0-9a-f]{24})(?:[/?#]|$)`)

// IDsNamedIn returns the ids of the files that the media URLs (or paths)
// in s name, in order, each once, whatever their host.
func IDsNamedIn(s string) []string {
	var out []string
	for _, m := range filePath.FindAllStringSubmatch(s, -1) {
		if !contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// IDOfPath returns the file a path of this server's media names: one that
// starts with /media/<id> (with a version, a transform, a name or a query
// after it).
func IDOfPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/media/") {
		return "", false
	}
	m := filePath.FindStringSubmatchIndex(p)
	if m == nil || m[0] != 0 {
		return "", false
	}
	return p[m[2]:m[3]], true
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

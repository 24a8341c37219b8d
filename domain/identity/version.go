package identity

import (
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/halocms/halocms/domain/fault"
)

// ServerVersionStream holds the server version the SDKs are told about:
// one ServerVersionSet per change, the last one current.
const ServerVersionStream = "settings-server-version"

// ServerVersionSet: an administrator set the server's version and the
// oldest SDK versions it expects (the SDKs only warn when they are older),
// with the change logs' addresses.
type ServerVersionSet struct {
	Server           string
	ServerChangeLog  string
	MinAndroid       string
	AndroidChangeLog string
	MinIOS           string
	IOSChangeLog     string
}

func (ServerVersionSet) EventType() string { return "identity.server_version_set" }

// ServerVersion is one version of the history (HALO's ServerVersion): its
// number in the stream (ID, 0 for the default), what was set, whether it
// is the current one, and when it was set.
type ServerVersion struct {
	ID int
	ServerVersionSet
	Current   bool
	CreatedAt time.Time
}

// DefaultServerVersion is what the SDKs are told until an administrator
// sets a version: the HALO 2 wire this server speaks, SDKs from 2.0.0.
var DefaultServerVersion = ServerVersionSet{Server: "2.7.0", MinAndroid: "2.0.0", MinIOS: "2.0.0"}

// SetServerVersion validates a new server version: versions are 1 to 64
// printable characters without spaces, change logs empty or an absolute
// http(s) address of up to 2000 characters.
func SetServerVersion(v ServerVersionSet) (ServerVersionSet, error) {
	for _, f := range []struct {
		name string
		val  *string
	}{{"server", &v.Server}, {"minAndroid", &v.MinAndroid}, {"minIOS", &v.MinIOS}} {
		*f.val = strings.TrimSpace(*f.val)
		if !versionLike(*f.val) {
			return v, fault.Invalidf("%s must be 1 to 64 printable characters without spaces", f.name).With("field", f.name)
		}
	}
	for _, f := range []struct {
		name string
		val  *string
	}{{"serverChangeLog", &v.ServerChangeLog}, {"androidChangeLog", &v.AndroidChangeLog}, {"iosChangeLog", &v.IOSChangeLog}} {
		*f.val = strings.TrimSpace(*f.val)
		if *f.val == "" {
			continue
		}
		u, err := url.Parse(*f.val)
		if len(*f.val) > 2000 || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return v, fault.Invalidf("%s must be empty or an http(s) address of up to 2000 characters", f.name).With("field", f.name)
		}
	}
	return v, nil
}

func versionLike(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

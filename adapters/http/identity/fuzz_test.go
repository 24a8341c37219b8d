package identity

import (
	"bytes"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
)

// FuzzIdentityBodies feeds arbitrary bytes to the identity context's body
// types (user, app, right, server version) and the domain's checks of what
// they carry: nothing panics, and every refusal is a client error, never an
// internal one.
func FuzzIdentityBodies(f *testing.F) {
	for _, s := range []string{
		`{"username":"editor","password":"a long secret","email":"e@x.io","name":"Ed","admin":false,"allowedIps":["10.0.0.0/8","::1"],"disabled":false}`,
		`{"id":"u1","currentPassword":"old","password":"new one","allowedIps":["not an ip"]}`,
		`{"name":"Android demo","clientId":"x","createdAt":1}`,
		`{"user":"u1","app":"a1","module":"m1","item":"i1","permissions":["read","write","manage"]}`,
		`{"server":"2.5.0","serverChangeLog":"x","minAndroid":"2.0.0","androidChangeLog":"","minIOS":"2.1","iosChangeLog":"","current":true}`,
		`{"current":"yes"}`, `{"permissions":[1]}`, `{}`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(what string, err error) { fuzztest.ClientError(t, what, err) }
		decode := func(v any) error { return httpapi.DecodeFrom(bytes.NewReader(body), v) }
		var u userBody
		if err := decode(&u); err == nil {
			check("ValidatePassword", identity.ValidatePassword(deref(u.Password)))
			_, err = identity.NormalizeAllowedIPs(deref(u.AllowedIPs))
			check("NormalizeAllowedIPs", err)
			_, err = identity.CreateUser(identity.User{}, identity.NewUser{ID: "u1", Username: deref(u.Username),
				Email: deref(u.Email), Name: deref(u.Name), Admin: deref(u.Admin), AllowedIPs: deref(u.AllowedIPs)})
			check("identity.CreateUser", err)
		} else {
			check("userBody", err)
		}
		var a appBody
		if err := decode(&a); err == nil {
			_, err = identity.CreateApp(identity.App{}, "a1", deref(a.Name), "c1", "h")
			check("identity.CreateApp", err)
		}
		var rb rightBody
		if err := decode(&rb); err == nil {
			for _, p := range rb.Permissions {
				_, err := rights.ParsePermission(p)
				check("rights.ParsePermission", err)
			}
			_, err = rights.NewScope(rb.Module, rb.Item)
			check("rights.NewScope", err)
		}
		var v serverVersionBody
		if err := decode(&v); err == nil {
			_, err = identity.SetServerVersion(identity.ServerVersionSet{Server: v.Server, ServerChangeLog: v.ServerChangeLog,
				MinAndroid: v.MinAndroid, AndroidChangeLog: v.AndroidChangeLog, MinIOS: v.MinIOS, IOSChangeLog: v.IOSChangeLog})
			check("identity.SetServerVersion", err)
			if v.Current != nil {
				_, err = httpapi.FlexBool(v.Current, "current")
				check("current", err)
			}
		}
	})
}

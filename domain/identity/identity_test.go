package identity

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestNormalizeAllowedIPs(t *testing.T) {
	got, err := NormalizeAllowedIPs([]string{"203.0.113.7/24", "2001:db8::1/32", "198.51.100.4", "203.0.113.0/24", "::ffff:10.0.0.0/104"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "198.51.100.4/32", "2001:db8::/32", "203.0.113.0/24"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"300.1.1.1", "10.0.0.0/33", "example.com", ""} {
		if _, err := NormalizeAllowedIPs([]string{bad}); !fault.Is(err, fault.Invalid) {
			t.Errorf("%q: got %v, want invalid", bad, err)
		}
	}
}

func TestIPAllowed(t *testing.T) {
	list := []string{"203.0.113.0/24", "2001:db8::/32"}
	for addr, want := range map[string]bool{
		"203.0.113.9": true, "203.0.114.1": false, "2001:db8:1::5": true, "2001:db9::1": false,
		"::ffff:203.0.113.5": true, // IPv4-mapped IPv6
	} {
		if got := IPAllowed(list, netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: got %v, want %v", addr, got, want)
		}
	}
	if !IPAllowed(nil, netip.MustParseAddr("192.0.2.1")) {
		t.Error("an empty allowlist must allow any address")
	}
}

func TestUserUpdateEmitsOnlyChanges(t *testing.T) {
	u := User{}.Apply(UserCreated{UserID: "u", Username: "ann", Email: "a@example.com", Name: "Ann"})
	name := "Ann"
	admin := true
	evs, err := u.Update(UserChanges{Name: &name, Admin: &admin})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(evs, []any{UserAdminChanged{UserID: "u", Admin: true}}) {
		t.Fatalf("got %#v", evs)
	}
	bad := "not an email"
	if _, err := u.Update(UserChanges{Email: &bad}); !fault.Is(err, fault.Invalid) {
		t.Fatalf("bad email: got %v", err)
	}
	if _, err := (User{}).Update(UserChanges{Name: &name}); !fault.Is(err, fault.NotFound) {
		t.Fatalf("missing user: got %v", err)
	}
}

func TestUsernameClaim(t *testing.T) {
	n := Username{}.Apply(UsernameClaimed{Username: "ann", UserID: "u1"})
	if _, err := n.Claim("ann", "u2"); !fault.Is(err, fault.Conflict) {
		t.Fatalf("claiming a taken name: got %v", err)
	}
	if _, err := n.Apply(UsernameReleased{Username: "ann", UserID: "u1"}).Claim("ann", "u2"); err != nil {
		t.Fatalf("claiming a released name: %v", err)
	}
	if err := ValidateUsername("a b"); err == nil {
		t.Fatal("a username with a space was accepted")
	}
}

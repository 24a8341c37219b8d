package apns

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestProviderTokenIsRenewedAfter40Minutes(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := newTokenCache(key, "KEY1", "TEAM1", func() time.Time { return now })
	get := func() *providerToken {
		t.Helper()
		tok, err := c.get()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	first := get()
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(first.jwt, claims, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil {
		t.Fatalf("token %q: %v", first.jwt, err)
	}
	if parsed.Header["kid"] != "KEY1" || claims["iss"] != "TEAM1" || claims["iat"] != float64(now.Unix()) {
		t.Fatalf("header %v claims %v", parsed.Header, claims)
	}

	now = now.Add(39 * time.Minute)
	if get() != first {
		t.Fatal("a 39-minute-old token was renewed")
	}
	now = now.Add(time.Minute)
	second := get()
	if second == first || second.jwt == first.jwt || !second.issued.Equal(now) {
		t.Fatal("a 40-minute-old token was kept")
	}

	c.invalidate(first) // stale: no effect on the current token
	if get() != second {
		t.Fatal("invalidating an old token dropped the current one")
	}
	c.invalidate(second)
	if third := get(); third == second {
		t.Fatal("an invalidated token was kept")
	}
}

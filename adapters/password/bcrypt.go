// Package password hashes and verifies secrets (CMS user passwords, app
// client secrets) with bcrypt.
package password

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// DefaultCost is the work factor used when Bcrypt.Cost is 0 (about a
// quarter of a second on a small server).
const DefaultCost = bcrypt.DefaultCost + 2

// Bcrypt hashes with bcrypt at Cost (0 means DefaultCost; tests use
// bcrypt.MinCost).
type Bcrypt struct{ Cost int }

func (b Bcrypt) cost() int {
	if b.Cost == 0 {
		return DefaultCost
	}
	return b.Cost
}

// Hash returns the bcrypt hash of pw. Passwords longer than 72 bytes are
// refused (bcrypt.ErrPasswordTooLong).
func (b Bcrypt) Hash(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), b.cost())
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// Verify reports whether pw matches hash. A malformed hash never matches.
func (b Bcrypt) Verify(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// DummyVerify does the work of a Verify against a fixed hash of the same
// cost and throws the answer away, so that a sign-in attempt for an unknown
// name takes as long as one for a known name.
func (b Bcrypt) DummyVerify(pw string) {
	_ = bcrypt.CompareHashAndPassword([]byte(dummyHash(b.cost())), []byte(pw))
}

var dummies sync.Map // cost → hash

func dummyHash(cost int) string {
	if h, ok := dummies.Load(cost); ok {
		return h.(string)
	}
	b, err := bcrypt.GenerateFromPassword([]byte("no such user, no such password"), cost)
	if err != nil { // cost out of range: fall back to a valid one
		b, _ = bcrypt.GenerateFromPassword([]byte("no such user, no such password"), DefaultCost)
	}
	h, _ := dummies.LoadOrStore(cost, string(b))
	return h.(string)
}

// HashSecret hashes a random client secret with SHA-256. Such secrets
// (40 random alphanumerics, about 238 bits) cannot be brute-forced, so an
// adaptive hash would only make every app sign-in cost a bcrypt round.
func (Bcrypt) HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// VerifySecret compares a secret with a HashSecret hash in constant time.
func (b Bcrypt) VerifySecret(hash, secret string) bool {
	return subtle.ConstantTimeCompare([]byte(hash), []byte(b.HashSecret(secret))) == 1
}

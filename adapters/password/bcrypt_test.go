package password_test

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/halocms/halocms/adapters/password"
)

func TestHashVerify(t *testing.T) {
	t.Parallel()
	b := password.Bcrypt{Cost: bcrypt.MinCost}
	h, err := b.Hash("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if cost, _ := bcrypt.Cost([]byte(h)); cost != bcrypt.MinCost {
		t.Errorf("cost %d, want %d", cost, bcrypt.MinCost)
	}
	if !b.Verify(h, "correct horse") {
		t.Error("right password refused")
	}
	if b.Verify(h, "correct horse ") || b.Verify(h, "") {
		t.Error("wrong password accepted")
	}
	if b.Verify("", "correct horse") || b.Verify("not a hash", "x") {
		t.Error("malformed hash matched")
	}
	if _, err := b.Hash(strings.Repeat("x", 73)); err == nil {
		t.Error("73-byte password hashed")
	}
}

func TestDefaultCost(t *testing.T) {
	t.Parallel()
	if password.DefaultCost != 12 {
		t.Fatalf("DefaultCost = %d, want 12", password.DefaultCost)
	}
}

// DummyVerify must cost about as much as Verify at the same cost.

func TestSecretHash(t *testing.T) {
	b := password.Bcrypt{}
	h := b.HashSecret("s3cret-value")
	if !b.VerifySecret(h, "s3cret-value") {
		t.Fatal("the right secret was refused")
	}
	if b.VerifySecret(h, "s3cret-valuf") || b.VerifySecret("", "s3cret-value") {
		t.Fatal("a wrong secret or empty hash was accepted")
	}
	if h == "s3cret-value" || len(h) != len("sha256:")+64 {
		t.Fatalf("unexpected hash form %q", h)
	}
}

package password

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// DummyVerify must cost what Verify costs, so that sign-in for an unknown
// name takes as long as for a known one: bcrypt's work is set by the cost
// recorded in the hash, so the dummy hash must carry the configured cost
// (checked exactly here rather than by timing, which a loaded machine
// makes flaky).
func TestDummyHashHasTheConfiguredCost(t *testing.T) {
	t.Parallel()
	for _, cost := range []int{bcrypt.MinCost, 8, 10} {
		b := Bcrypt{Cost: cost}
		got, err := bcrypt.Cost([]byte(dummyHash(b.cost())))
		if err != nil {
			t.Fatal(err)
		}
		h, err := b.Hash("secret-secret")
		if err != nil {
			t.Fatal(err)
		}
		real, err := bcrypt.Cost([]byte(h))
		if err != nil {
			t.Fatal(err)
		}
		if got != real || got != cost {
			t.Errorf("cost %d: dummy hash has cost %d, real hashes %d", cost, got, real)
		}
		b.DummyVerify("wrong-password") // must not panic on any configured cost
	}
}

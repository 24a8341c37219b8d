package loyalty

import "reflect"

// SameState reports whether two accounts hold the same state: equal
// fields (an empty list of lots equals none) and, for the last stamping,
// the same key among each one's own keys.
func SameState(a, b *Account) bool {
	x, y := *a, *b
	if len(x.lots) == 0 {
		x.lots = nil
	}
	if len(y.lots) == 0 {
		y.lots = nil
	}
	if stampingKey(&x) != stampingKey(&y) {
		return false
	}
	x.stamping, y.stamping = nil, nil
	return reflect.DeepEqual(x, y)
}

// stampingKey is the key under which an account holds its last stamping
// ("" if none, or if no key holds it).
func stampingKey(a *Account) string {
	for key, k := range a.keys {
		if k == a.stamping {
			return key
		}
	}
	return ""
}

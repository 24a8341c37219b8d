package push

import "fmt"

// MarshalText stores an outcome by name ("delivered", "invalid_token",
// "retry", "failed"), so that recorded deliveries do not depend on the
// order of the constants.
func (o Outcome) MarshalText() ([]byte, error) {
	if o < Delivered || o > Failed {
		return nil, fmt.Errorf("push: invalid outcome %d", int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText reads an outcome stored by MarshalText.
func (o *Outcome) UnmarshalText(b []byte) error {
	for _, c := range []Outcome{Delivered, InvalidToken, Retry, Failed} {
		if string(b) == c.String() {
			*o = c
			return nil
		}
	}
	return fmt.Errorf("push: unknown outcome %q", b)
}

// Final reports whether the outcome ends a device's delivery (Retry does
// not).
func (o Outcome) Final() bool { return o == Delivered || o == InvalidToken || o == Failed }

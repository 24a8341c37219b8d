package memstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/event"
)

// The limits of PostgreSQL's numeric type, which holds jsonb's numbers
// (src/include/utils/numeric.h and numeric.c): at most 16383 digits after
// the point as written, a leading digit at most at 10^131071 (a weight of
// 32767 in base 10000), and an exponent within ±(2^31-1)/2 however the
// rest reads.
const (
	maxScale    = 16383
	maxPower    = 131071
	maxExponent = 1<<30 - 1
)

var (
	errNUL      = errors.New("a NUL character in a string")
	errNumeric  = errors.New("a number outside the range of numeric")
	errEncoding = errors.New("not valid UTF-8")
)

// refused reports why the PostgreSQL store would refuse an event's data or
// metadata as a data exception (nil when it holds them): a NUL character
// in a string of either (jsonb: 22P05), a number numeric cannot hold
// (22003). So a test of a decision passes here only where it would pass
// there.
func refused(data []byte, meta event.Metadata) error {
	for _, s := range []string{meta.Actor, meta.App, meta.CorrelationID, meta.CausationID, meta.ClientIP} {
		if strings.ContainsRune(s, 0) {
			return errNUL
		}
	}
	if !suspect(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			if strings.ContainsRune(v, 0) {
				return errNUL
			}
		case json.Number:
			if !numeric(string(v)) {
				return errNumeric
			}
		}
	}
}

// suspect is a quick look for what refused looks for: a NUL character
// (encoding/json writes it \u0000), an exponent, or a document long
// enough to hold a number of more than maxScale digits. Most events have
// none of them and need not be decoded.
func suspect(data []byte) bool {
	if len(data) > maxScale || bytes.Contains(data, []byte(`\u0000`)) {
		return true
	}
	for i := 1; i < len(data); i++ {
		if (data[i] == 'e' || data[i] == 'E') && '0' <= data[i-1] && data[i-1] <= '9' {
			return true
		}
	}
	return false
}

// refusedText reports why a text column would refuse s (22021), or nil.
func refusedText(s string) error {
	switch {
	case strings.ContainsRune(s, 0):
		return errNUL
	case !utf8.ValidString(s):
		return errEncoding
	}
	return nil
}

// numeric reports whether PostgreSQL's numeric holds the JSON number n.
func numeric(n string) bool {
	mantissa, exp, hasExp := strings.Cut(strings.ToLower(strings.TrimPrefix(n, "-")), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	var e int64
	if hasExp {
		var err error
		if e, err = strconv.ParseInt(exp, 10, 64); err != nil || e >= maxExponent || e <= -maxExponent {
			return false
		}
	}
	if int64(len(frac))-e > maxScale {
		return false
	}
	digits := whole + frac
	lead := strings.IndexFunc(digits, func(r rune) bool { return r != '0' })
	return lead < 0 || int64(len(whole)-1-lead)+e <= maxPower // zero, or its leading digit in range
}

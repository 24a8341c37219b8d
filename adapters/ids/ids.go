// Package ids generates identifiers in HALO's style (24 hex characters,
// like the MongoDB ObjectIds the SDKs expect: 4 bytes of seconds, then
// random bytes) and random secrets.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// Generator makes ids and secrets from crypto/rand.
type Generator struct{}

// NewID returns a 24-hex id whose first 8 characters are the creation time,
// so ids sort roughly by age.
func (Generator) NewID() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(time.Now().Unix()))
	_, _ = rand.Read(b[4:])
	return hex.EncodeToString(b[:])
}

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Token returns n random alphanumeric characters (uniform: rejection
// sampling, no modulo bias).
func Token(n int) string {
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:])
		for _, c := range buf {
			if c < 248 { // 248 = 62*4
				out = append(out, alphanumeric[c%62])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out)
}

// Token returns n random alphanumeric characters (see the function Token).
func (Generator) Token(n int) string { return Token(n) }

// NewSecret returns a 40-character client secret.
func (Generator) NewSecret() string { return Token(40) }

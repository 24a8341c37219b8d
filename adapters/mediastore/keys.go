// Package mediastore holds what the media storage drivers (local, s3)
// share: the rules a key must follow and the local staging area where an
// upload is streamed, hashed and bounded before it is kept.
//
// It uses the standard library only: staging is a temporary file, a
// SHA-256 computed while the bytes stream through, and a bounded copy
// buffer, so nothing is ever held whole in memory.
package mediastore

import (
	"github.com/halocms/halocms/domain/fault"
)

// Limits of a key, in bytes: the whole key, and one segment (a file name
// on most filesystems).
const (
	MaxKeyLen     = 512
	MaxSegmentLen = 255
)

// CheckKey refuses, with an error of kind fault.Invalid, a key that is not
// made of segments of [a-z0-9._-] joined by "/": no empty segment (so no
// leading, trailing or doubled "/"), no "." or ".." segment, at most
// MaxKeyLen bytes and MaxSegmentLen a segment. Drivers call it before touching storage, so no key can
// name a path outside their root.
func CheckKey(key string) error {
	if key == "" {
		return fault.Invalidf("storage key is empty")
	}
	if len(key) > MaxKeyLen {
		return fault.Invalidf("storage key is longer than %d bytes", MaxKeyLen)
	}
	start := 0
	for i := 0; i <= len(key); i++ {
		if i < len(key) && key[i] != '/' {
			if !keyByte(key[i]) {
				return fault.Invalidf("storage key %q has a byte outside [a-z0-9/._-]", key)
			}
			continue
		}
		seg := key[start:i]
		switch seg {
		case "":
			return fault.Invalidf("storage key %q has an empty segment", key)
		case ".", "..":
			return fault.Invalidf("storage key %q has a %q segment", key, seg)
		}
		if len(seg) > MaxSegmentLen {
			return fault.Invalidf("storage key has a segment longer than %d bytes", MaxSegmentLen)
		}
		start = i + 1
	}
	return nil
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

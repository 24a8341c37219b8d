// Package fuzztest holds what the contexts' fuzz targets check of every
// input: whatever a body holds, refusing it is the client's fault.
package fuzztest

import (
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

// ClientError fails t when err is an internal error: bad input must be
// refused with a client error (a 4xx), never a 5xx. what names the step.
func ClientError(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil && fault.KindOf(err) == fault.Internal {
		t.Fatalf("%s: %v is an internal error, want a client error", what, err)
	}
}

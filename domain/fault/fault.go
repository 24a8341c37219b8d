// Package fault defines the kinds of failure the application reports. Each
// domain returns *fault.Error values (or wraps them); the HTTP adapter maps
// kinds to status codes in exactly one place.
package fault

import (
	"errors"
	"fmt"
)

// Kind classifies a failure.
type Kind int

const (
	Internal Kind = iota
	Invalid
	NotFound
	Conflict
	Unauthenticated
	Forbidden
	TooManyRequests
	// Unavailable: the request could not be served in the time it was
	// given (a search past its time bound).
	Unavailable
	// Precondition: a condition the caller put on the write (the
	// version it read, as HTTP's If-Match sends it) does not hold;
	// nothing was changed.
	Precondition
	// Unprocessable: the request is well formed but cannot be applied as
	// sent (an Idempotency-Key reused with another body).
	Unprocessable
	// TooLarge: the request's body (an upload) is larger than allowed.
	TooLarge
	// Unsupported: the body is of a type that is not accepted (an upload
	// whose bytes are not an allowed media type).
	Unsupported
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case Conflict:
		return "conflict"
	case Unauthenticated:
		return "unauthenticated"
	case Forbidden:
		return "forbidden"
	case TooManyRequests:
		return "too many requests"
	case Unavailable:
		return "unavailable"
	case Precondition:
		return "precondition failed"
	case Unprocessable:
		return "unprocessable"
	case TooLarge:
		return "too large"
	case Unsupported:
		return "unsupported media type"
	}
	return "internal"
}

// Error is an application failure with a kind, a message safe to show to
// the caller, and optional structured detail (for example the field that
// failed validation).
type Error struct {
	Kind    Kind
	Message string
	Extra   map[string]any
}

func (e *Error) Error() string { return e.Message }

// New returns an error of the given kind.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// With returns a copy of e with one more detail.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = make(map[string]any, len(e.Extra)+1)
	for k, v := range e.Extra {
		c.Extra[k] = v
	}
	c.Extra[key] = value
	return &c
}

// KindOf returns the kind of err: Internal unless it wraps a *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is a fault of the given kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }

// Shorthands.
func Invalidf(format string, args ...any) *Error  { return New(Invalid, format, args...) }
func NotFoundf(format string, args ...any) *Error { return New(NotFound, format, args...) }
func Conflictf(format string, args ...any) *Error { return New(Conflict, format, args...) }
func Forbiddenf(format string, args ...any) *Error {
	return New(Forbidden, format, args...)
}

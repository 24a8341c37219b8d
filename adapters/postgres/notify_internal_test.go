package postgres

import (
	"testing"

	"github.com/halocms/halocms/domain/event"
)

// TestTakeTypesOnce: the types of an append are taken once; a second
// take (a signal whose types the first NOTIFY already carried) has none,
// so the notifier sends nothing rather than an empty "any type" payload.
func TestTakeTypesOnce(t *testing.T) {
	s := &EventStore{types: map[string]struct{}{}, notify: make(chan struct{}, 1)}
	s.wake(event.StreamAppend{Events: []event.Event{{Type: "b.two"}, {Type: "a.one"}}}, event.StreamAppend{Events: []event.Event{{Type: "a.one"}}})
	if p, ok := s.takeTypes(); !ok || p != "a.one,b.two" {
		t.Fatalf("first take: %q, %v; want \"a.one,b.two\", true", p, ok)
	}
	if p, ok := s.takeTypes(); ok {
		t.Fatalf("second take: %q, %v; want nothing to announce", p, ok)
	}
	s.wake(event.StreamAppend{Events: []event.Event{{Data: struct{}{}}}}) // a type the codec cannot name
	if p, ok := s.takeTypes(); !ok || p != "" {
		t.Fatalf("unknown type: %q, %v; want \"\" (any type), true", p, ok)
	}
}

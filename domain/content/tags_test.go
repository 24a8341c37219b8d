package content

import (
	"errors"
	"fmt"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestRestrictTags(t *testing.T) {
	m := newModule(t, ModuleSpec{Name: "Tagged"})
	a, b := Tag{Name: "p", Value: "A"}, Tag{ID: "t2", Name: "p", Value: "B"}

	// An empty list allows every tag: nothing to read, nothing refused.
	r := m.RestrictTags(nil)
	r.Item("i1", []Tag{b})
	if r.Needed() || r.Decide() != nil {
		t.Fatalf("an empty list: needed %v, %v", r.Needed(), r.Decide())
	}

	// Items holding only allowed tags (by name and value, or by id) pass.
	r = m.RestrictTags([]Tag{a, {ID: "t2"}})
	r.Item("i1", []Tag{a, b})
	r.Item("i2", nil)
	if err := r.Decide(); err != nil {
		t.Fatalf("allowed tags refused: %v", err)
	}

	// Items holding B once only A is allowed: refused, listing them (up to 100).
	r = m.RestrictTags([]Tag{a})
	for i := range 120 {
		r.Item(fmt.Sprintf("i%d", i), []Tag{a, b})
	}
	r.Item("ok", []Tag{a})
	var f *fault.Error
	if err := r.Decide(); !fault.Is(err, fault.Conflict) || !errors.As(err, &f) {
		t.Fatalf("refused tags: %v", err)
	}
	list, _ := f.Extra["affectedItems"].([]map[string]any)
	tags, _ := f.Extra["tags"].([]map[string]any)
	if len(list) != 100 || list[0]["id"] != "i0" || f.Extra["affectedCount"] != 120 || f.Extra["field"] != "tags" ||
		len(tags) != 1 || tags[0]["value"] != "B" {
		t.Errorf("extra %v", f.Extra)
	}
	if held, _ := list[0]["tags"].([]map[string]any); len(held) != 1 || held[0]["id"] != "t2" {
		t.Errorf("item tags %v, want B only", list[0]["tags"])
	}
}

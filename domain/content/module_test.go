package content

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func fold[S interface{ Apply(any) S }](s S, evs []any) S {
	for _, e := range evs {
		s = s.Apply(e)
	}
	return s
}

func testFields(t testing.TB) []Field {
	return []Field{
		{ID: "f1", Name: "title", Type: typeID(t, "Text"), Required: true, Rules: FieldRules{MaxLength: ptr(50)}},
		{ID: "f2", Name: "price", Type: typeID(t, "Number"), Rules: FieldRules{Min: ptr(0.0), Default: json.Number("1")}},
		{ID: "f3", Name: "kind", Type: typeID(t, "Single choice"), Rules: FieldRules{Values: []string{"a", "b"}}},
	}
}

// cloneFields deep-copies fields so that equality cannot rest on shared pointers.
func cloneFields(fs []Field) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		g := f
		if f.Rules.MinLength != nil {
			g.Rules.MinLength = ptr(*f.Rules.MinLength)
		}
		if f.Rules.MaxLength != nil {
			g.Rules.MaxLength = ptr(*f.Rules.MaxLength)
		}
		if f.Rules.Min != nil {
			g.Rules.Min = ptr(*f.Rules.Min)
		}
		if f.Rules.Max != nil {
			g.Rules.Max = ptr(*f.Rules.Max)
		}
		g.Rules.Values = append([]string(nil), f.Rules.Values...)
		out[i] = g
	}
	return out
}

func newModule(t testing.TB, spec ModuleSpec) Module {
	t.Helper()
	evs, err := CreateModule(Module{}, "m1", "app1", spec, "Ann")
	if err != nil {
		t.Fatalf("CreateModule: %v", err)
	}
	m := fold(Module{}, evs)
	if !m.Exists() {
		t.Fatal("module does not exist after creation")
	}
	return m
}

func types(evs []any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.(interface{ EventType() string }).EventType())
	}
	return out
}

func TestCreateModule(t *testing.T) {
	spec := ModuleSpec{Name: "  Blog posts ", Single: true, Tags: []Tag{{Name: "lang", Value: "en"}}, Fields: testFields(t), ModuleType: "mt1"}
	evs, err := CreateModule(Module{}, "m1", "app1", spec, "Ann")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("events %v", types(evs))
	}
	c, ok := evs[0].(ModuleCreated)
	if !ok {
		t.Fatalf("event %T", evs[0])
	}
	if c.ModuleID != "m1" || c.App != "app1" || c.Name != "Blog posts" || !c.Single || c.ModuleType != "mt1" || c.By != "Ann" ||
		len(c.Fields) != 3 || len(c.Tags) != 1 {
		t.Fatalf("created %+v", c)
	}
	m := fold(Module{}, evs)
	if m.ID != "m1" || m.Name != "Blog posts" || m.Deleted {
		t.Fatalf("module %+v", m)
	}
	if f, ok := m.Field("price"); !ok || f.ID != "f2" {
		t.Fatalf("Field(price) = %+v, %v", f, ok)
	}
	if _, ok := m.Field("Price"); ok {
		t.Fatal("Field is case-sensitive")
	}

	if _, err := CreateModule(m, "m1", "app1", spec, "Ann"); !fault.Is(err, fault.Conflict) {
		t.Fatalf("second creation: %v", err)
	}
	for _, bad := range []ModuleSpec{
		{Name: "   "},
		{Name: string(make([]rune, 201))},
		{Name: "x", Fields: []Field{{Name: "a", Type: "nope"}}},
		{Name: "x", Tags: []Tag{{Value: "v"}}},
		{Name: "x", Fields: []Field{{Name: "l", Type: typeID(t, "Localized text"), Rules: FieldRules{Default: 5}}}},
		{Name: "x", Fields: []Field{{Name: "l", Type: typeID(t, "Localized text"), Rules: FieldRules{Default: "long", MaxLength: ptr(2)}}}},
		{Name: "x", Fields: []Field{{Name: "d", Type: typeID(t, "Date"), Rules: FieldRules{Default: json.Number("1e20")}}}},
	} {
		if _, err := CreateModule(Module{}, "m2", "app1", bad, "Ann"); !fault.Is(err, fault.Invalid) {
			t.Errorf("CreateModule(%+v): %v, want invalid", bad, err)
		}
	}
	// A localized text's default: one text for every locale, as HALO's CMS
	// keeps it, or a text per locale.
	for _, def := range []any{"pen", map[string]any{"en-US": "pen", "nl-NL": "pen"}} {
		ok := ModuleSpec{Name: "x", Fields: []Field{{Name: "l", Type: typeID(t, "Localized text"), Rules: FieldRules{Default: def}}}}
		if _, err := CreateModule(Module{}, "m3", "app1", ok, "Ann"); err != nil {
			t.Errorf("a localized text with the default %v: %v", def, err)
		}
	}
}

func TestModuleChange(t *testing.T) {
	base := ModuleSpec{Name: "Posts", Tags: []Tag{{ID: "t1"}}, Fields: testFields(t)}
	m := newModule(t, base)

	t.Run("no-op", func(t *testing.T) {
		same := ModuleSpec{Name: " Posts ", Tags: []Tag{{ID: "t1"}}, Fields: cloneFields(testFields(t))}
		// A default that is the same JSON number in another Go type is no change.
		same.Fields[1].Rules.Default = float64(1)
		evs, err := m.Change(same, "Bob")
		if err != nil || len(evs) != 0 {
			t.Fatalf("no-op change: %v, %v", types(evs), err)
		}
	})
	t.Run("rename only", func(t *testing.T) {
		s := base
		s.Name = "Articles"
		s.Fields = cloneFields(base.Fields)
		evs, err := m.Change(s, "Bob")
		if err != nil {
			t.Fatal(err)
		}
		want := []any{ModuleRenamed{ModuleID: "m1", App: "app1", Name: "Articles", By: "Bob"}}
		if !reflect.DeepEqual(evs, want) {
			t.Fatalf("got %#v, want %#v", evs, want)
		}
		if got := fold(m, evs); got.Name != "Articles" || len(got.Fields) != 3 {
			t.Fatalf("after rename: %+v", got)
		}
	})
	t.Run("fields only", func(t *testing.T) {
		s := base
		s.Fields = cloneFields(base.Fields)
		s.Fields[0].Rules.MaxLength = ptr(60)
		evs, err := m.Change(s, "Bob")
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 {
			t.Fatalf("events %v", types(evs))
		}
		fc, ok := evs[0].(ModuleFieldsChanged)
		if !ok || fc.ModuleID != "m1" || fc.App != "app1" || fc.By != "Bob" || len(fc.Fields) != 3 || *fc.Fields[0].Rules.MaxLength != 60 {
			t.Fatalf("event %#v", evs[0])
		}
		if got := fold(m, evs); *got.Fields[0].Rules.MaxLength != 60 || got.Name != "Posts" {
			t.Fatalf("after change: %+v", got)
		}
	})
	t.Run("each field attribute is a change", func(t *testing.T) {
		muts := []func(fs []Field){
			func(fs []Field) { fs[0].ID = "other" },
			func(fs []Field) { fs[0].Description = "d" },
			func(fs []Field) { fs[0].Required = false },
			func(fs []Field) { fs[0].Localized = true },
			func(fs []Field) { fs[0].Type = typeID(t, "Long text") },
			func(fs []Field) { fs[0].Rules.Pattern = "x.*" },
			func(fs []Field) { fs[0].Rules.MinLength = ptr(1) },
			func(fs []Field) { fs[1].Rules.Max = ptr(9.0) },
			func(fs []Field) { fs[1].Rules.Default = json.Number("2") },
			func(fs []Field) { fs[2].Rules.Values = []string{"a", "b", "c"} },
			func(fs []Field) { fs[0], fs[1] = fs[1], fs[0] },
			func(fs []Field) { fs[2].Name = "sort" },
			func(fs []Field) { fs[2].Rules.Widget = "select" },
		}
		for i, mut := range muts {
			s := base
			s.Fields = cloneFields(base.Fields)
			mut(s.Fields)
			evs, err := m.Change(s, "Bob")
			if err != nil {
				t.Fatalf("mutation %d: %v", i, err)
			}
			if len(evs) != 1 {
				t.Fatalf("mutation %d: events %v", i, types(evs))
			}
			if _, ok := evs[0].(ModuleFieldsChanged); !ok {
				t.Fatalf("mutation %d: %T", i, evs[0])
			}
		}
		// Adding and removing fields.
		for _, fs := range [][]Field{testFields(t)[:2], append(testFields(t), Field{ID: "f4", Name: "x", Type: typeID(t, "Boolean")})} {
			s := base
			s.Fields = fs
			evs, _ := m.Change(s, "Bob")
			if len(evs) != 1 {
				t.Fatalf("%d fields: events %v", len(fs), types(evs))
			}
		}
	})
	t.Run("configuration only", func(t *testing.T) {
		s := base
		s.Single = true
		evs, _ := m.Change(s, "Bob")
		want := []any{ModuleConfigured{ModuleID: "m1", App: "app1", Single: true, Tags: []Tag{{ID: "t1"}}, By: "Bob"}}
		if !reflect.DeepEqual(evs, want) {
			t.Fatalf("got %#v", evs)
		}
		s = base
		s.Tags = nil
		evs, _ = m.Change(s, "Bob")
		if len(evs) != 1 || types(evs)[0] != "content.module_configured" {
			t.Fatalf("tags removed: %v", types(evs))
		}
	})
	t.Run("everything", func(t *testing.T) {
		s := ModuleSpec{Name: "New", Single: true, Fields: testFields(t)[:1]}
		evs, err := m.Change(s, "Bob")
		if err != nil {
			t.Fatal(err)
		}
		got := types(evs)
		want := []string{"content.module_renamed", "content.module_configured", "content.module_fields_changed"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		after := fold(m, evs)
		if after.Name != "New" || !after.Single || len(after.Tags) != 0 || len(after.Fields) != 1 {
			t.Fatalf("after: %+v", after)
		}
		// Once applied, the same spec is a no-op.
		if again, _ := after.Change(s, "Bob"); len(again) != 0 {
			t.Fatalf("re-applying: %v", types(again))
		}
	})
	t.Run("invalid spec", func(t *testing.T) {
		s := base
		s.Fields = append(cloneFields(base.Fields), Field{Name: "Title", Type: typeID(t, "Text")})
		if _, err := m.Change(s, "Bob"); !fault.Is(err, fault.Invalid) {
			t.Fatalf("duplicate field: %v", err)
		}
		if _, err := m.Change(ModuleSpec{Name: ""}, "Bob"); !fault.Is(err, fault.Invalid) {
			t.Fatalf("empty name: %v", err)
		}
	})
	t.Run("missing or deleted", func(t *testing.T) {
		if _, err := (Module{ID: "x"}).Change(base, "Bob"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("missing: %v", err)
		}
		evs, err := m.Delete("Bob")
		if err != nil || !reflect.DeepEqual(evs, []any{ModuleDeleted{ModuleID: "m1", App: "app1", By: "Bob"}}) {
			t.Fatalf("delete: %v, %v", evs, err)
		}
		gone := fold(m, evs)
		if !gone.Deleted || !gone.Exists() {
			t.Fatalf("deleted module %+v", gone)
		}
		if _, err := gone.Change(base, "Bob"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("change deleted: %v", err)
		}
		if _, err := gone.Delete("Bob"); !fault.Is(err, fault.NotFound) {
			t.Fatalf("delete twice: %v", err)
		}
	})
}

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		typ                    string
		localized              bool
		kind                   Kind
		scalar, multi, numeric bool
	}{
		{"Text", false, KindText, true, false, false},
		{"Text", true, KindLocalized, false, false, false},
		{"Long text", true, KindLocalized, false, false, false},
		{"Localized text", false, KindLocalized, false, false, false},
		{"Number", false, KindNumber, true, false, true},
		{"Date", false, KindTimestamp, true, false, true},
		{"Multiple relation", false, KindRelations, false, true, false},
		{"Single relation", false, KindRelation, true, false, false},
		{"Multiple choice", false, KindChoices, false, true, false},
		{"Single choice", false, KindChoice, true, false, false},
		{"Object", false, KindObject, false, false, false},
		{"List", false, KindList, false, false, false},
		{"Boolean", false, KindBoolean, true, false, false},
	} {
		f := Field{Name: "f", Type: typeID(t, c.typ), Localized: c.localized}
		k := f.Kind()
		if k != c.kind || k.Scalar() != c.scalar || k.Multi() != c.multi || k.Numeric() != c.numeric {
			t.Errorf("%s localized=%v: kind %v scalar %v multi %v numeric %v", c.typ, c.localized, k, k.Scalar(), k.Multi(), k.Numeric())
		}
	}
}

func TestModuleNameAndStreams(t *testing.T) {
	if ModuleNameStream("a1", "Blog") != ModuleNameStream("a1", "bLOG") {
		t.Error("module names are reserved case-insensitively")
	}
	if ModuleNameStream("a1", "Blog") == ModuleNameStream("a2", "Blog") {
		t.Error("module names are reserved per app")
	}
	n := ModuleName{}.Apply(ModuleNameClaimed{App: "a1", Name: "Blog", ModuleID: "m1"})
	if n.Module != "m1" {
		t.Fatalf("claimed: %+v", n)
	}
	if n = n.Apply(ModuleNameReleased{App: "a1", Name: "Blog", ModuleID: "m1"}); n.Module != "" {
		t.Fatalf("released: %+v", n)
	}
}

func TestTagMatches(t *testing.T) {
	for _, c := range []struct {
		a, b Tag
		want bool
	}{
		{Tag{ID: "1"}, Tag{ID: "1", Name: "x"}, true},
		{Tag{ID: "1", Name: "n", Value: "v"}, Tag{ID: "2", Name: "n", Value: "v"}, false},
		{Tag{Name: "n", Value: "v"}, Tag{ID: "2", Name: "n", Value: "v"}, true},
		{Tag{Name: "n", Value: "v"}, Tag{Name: "n", Value: "w"}, false},
	} {
		if got := c.a.Matches(c.b); got != c.want {
			t.Errorf("%+v.Matches(%+v) = %v", c.a, c.b, got)
		}
	}
}

func TestModuleTypeSave(t *testing.T) {
	evs, err := ModuleType{}.Save("t1", " Blog ", false, testFields(t))
	if err != nil || len(evs) != 1 {
		t.Fatalf("save: %v, %v", evs, err)
	}
	mt := fold(ModuleType{}, evs)
	if !mt.Exists() || mt.Name != "Blog" {
		t.Fatalf("type %+v", mt)
	}
	if evs, err := mt.Save("t1", "Blog", false, cloneFields(testFields(t))); err != nil || len(evs) != 0 {
		t.Fatalf("same save: %v, %v", types(evs), err)
	}
	if evs, _ := mt.Save("t1", "Blog", true, testFields(t)); len(evs) != 1 {
		t.Fatalf("changed save: %v", types(evs))
	}
	if _, err := mt.Save("t1", "Blog", false, []Field{{Name: "x", Type: "bad"}}); !fault.Is(err, fault.Invalid) {
		t.Fatalf("bad fields: %v", err)
	}
	for _, id := range []string{"", "a b", "a/b", string(make([]byte, 65))} {
		if _, err := (ModuleType{}).Save(id, "Blog", false, testFields(t)); !fault.Is(err, fault.Invalid) {
			t.Errorf("id %q: %v, want it refused", id, err)
		}
	}
	evs, err = mt.Delete()
	if err != nil || len(evs) != 1 {
		t.Fatalf("delete: %v, %v", evs, err)
	}
	if gone := fold(mt, evs); gone.Exists() {
		t.Fatal("deleted type exists")
	} else if _, err := gone.Delete(); !fault.Is(err, fault.NotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

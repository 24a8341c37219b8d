package content

import (
	"regexp"
	"slices"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// Streams of this context.
func ModuleStream(id string) string     { return "module-" + id }
func ItemStream(id string) string       { return "instance-" + id }
func ModuleTypeStream(id string) string { return "moduletype-" + id }

// ModuleNameStream reserves a module name within an app: the SDKs address
// modules by name, so two modules of one app never share one
// (case-insensitively).
func ModuleNameStream(app, name string) string {
	return "modulename-" + app + "-" + strings.ToLower(name)
}

// SingleItemStream reserves the one item of a single-item module.
func SingleItemStream(module string) string { return "moduleitem-" + module }

// Tag is a segmentation tag: matched by id, or by name and value.
type Tag struct {
	ID      string
	Name    string
	Value   string
	TagType string
}

// Matches reports whether t and o are the same tag: same id, or same name
// and value.
func (t Tag) Matches(o Tag) bool {
	if t.ID != "" && o.ID != "" {
		return t.ID == o.ID
	}
	return t.Name == o.Name && t.Value == o.Value
}

// FieldRules are a field's own validation rules, on top of its type's.
type FieldRules struct {
	MinLength  *int     // text: shortest length in characters
	MaxLength  *int     // text: longest length in characters
	Pattern    string   // text: an RE2 regular expression the whole value must match
	Min        *float64 // number, date: smallest value
	Max        *float64 // number, date: largest value
	Values     []string // choice fields: the options; text fields: the allowed values
	Default    any      // the value the CMS proposes (format.default)
	Module     string   // relation fields: the module the related items must belong to
	MediaTypes []string // url fields: allowed file extensions, e.g. "jpg"
	Widget     string   // the editor the CMS shows values with: one of the type's Widgets ("" its first)
}

// Field is one structure field of a module.
type Field struct {
	ID          string
	Name        string // the key in item values
	Description string
	Type        string // a FieldTypes id
	Required    bool
	Localized   bool // text values are objects keyed by locale
	Rules       FieldRules
}

// Kind of the field's values.
func (f Field) Kind() Kind {
	t, _ := FieldTypeByID(f.Type)
	if f.Localized && t.Kind == KindText {
		return KindLocalized
	}
	return t.Kind
}

// LongTextType is the id of the Long text field type.
const LongTextType = "000000000000000000000012"

// Indexed reports whether the field's values go into the search index
// (content_keys): all but Object fields and long text, which are searched
// by reading the items' values instead (HALO's "long values"). Keeping
// long texts out of the index keeps imports fast.
func (f Field) Indexed() bool {
	k := f.Kind()
	return k != KindObject && !(k == KindText && f.Type == LongTextType)
}

// Module is a content structure, rebuilt from its events.
type Module struct {
	ID         string
	App        string
	Name       string
	Single     bool
	Tags       []Tag
	Fields     []Field
	ModuleType string
	Deleted    bool
	exists     bool
}

// Exists reports whether the module was created.
func (m Module) Exists() bool { return m.exists }

// Field returns the field with the given name.
func (m Module) Field(name string) (Field, bool) {
	for _, f := range m.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Apply folds one event into the state.
func (m Module) Apply(ev any) Module {
	switch e := ev.(type) {
	case ModuleCreated:
		m = Module{ID: e.ModuleID, App: e.App, Name: e.Name, Single: e.Single, Tags: e.Tags,
			Fields: e.Fields, ModuleType: e.ModuleType, exists: true}
	case ModuleRenamed:
		m.Name = e.Name
	case ModuleConfigured:
		m.Single, m.Tags = e.Single, e.Tags
	case ModuleFieldsChanged:
		m.Fields = e.Fields
	case ModuleDeleted:
		m.Deleted = true
	}
	return m
}

// ModuleSpec is what a module is created or changed with.
type ModuleSpec struct {
	Name       string
	Single     bool
	Tags       []Tag
	Fields     []Field // field ids are assigned by the caller
	ModuleType string
}

// ValidateModuleName checks a module name.
func ValidateModuleName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 200 {
		return "", fault.Invalidf("module name must be 1 to 200 characters").With("field", "name")
	}
	return name, nil
}

// ValidateFields checks a module's field list: names unique and non-empty,
// types known, rules that fit the type and agree with each other.
func ValidateFields(fields []Field) error {
	seen := map[string]bool{}
	for i, f := range fields {
		bad := func(format string, args ...any) error {
			return fault.Invalidf("field %q: "+format, append([]any{f.Name}, args...)...).
				With("field", f.Name).With("position", i)
		}
		name := strings.TrimSpace(f.Name)
		if name == "" || name != f.Name || len([]rune(name)) > 100 {
			return fault.Invalidf("field %d: a name of 1 to 100 characters without surrounding spaces is required", i).With("position", i)
		}
		if seen[strings.ToLower(name)] {
			return bad("the name is used twice")
		}
		seen[strings.ToLower(name)] = true
		t, ok := FieldTypeByID(f.Type)
		if !ok {
			return bad("unknown field type %q (want one of 000000000000000000000001 to 000000000000000000000021)", f.Type)
		}
		r := f.Rules
		text := t.Kind == KindText
		if f.Localized && !text && t.Kind != KindLocalized {
			return bad("only text fields can be localized")
		}
		if (r.MinLength != nil || r.MaxLength != nil || r.Pattern != "") && !(text || t.Kind == KindLocalized || t.Kind == KindURL) {
			return bad("length and pattern rules apply to text fields only")
		}
		if r.MinLength != nil && *r.MinLength < 0 || r.MaxLength != nil && *r.MaxLength < 0 ||
			r.MinLength != nil && r.MaxLength != nil && *r.MinLength > *r.MaxLength {
			return bad("minLength and maxLength must be 0 or more, and minLength at most maxLength")
		}
		if r.Pattern != "" {
			if _, err := regexp.Compile(r.Pattern); err != nil {
				return bad("pattern does not compile: %v", err)
			}
		}
		if (r.Min != nil || r.Max != nil) && !t.Kind.Numeric() {
			return bad("min and max rules apply to number, date and time fields only")
		}
		if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
			return bad("min must be at most max")
		}
		if t.Kind == KindChoice || t.Kind == KindChoices {
			if len(r.Values) == 0 {
				return bad("a choice field needs its list of values")
			}
		} else if len(r.Values) > 0 && !(text || t.Kind == KindNumber) {
			return bad("allowed values apply to text, number and choice fields only")
		}
		if r.Module != "" && !t.Kind.Relation() {
			return bad("a target module applies to relation fields only")
		}
		if len(r.MediaTypes) > 0 && t.Kind != KindURL {
			return bad("media types apply to website, image, video and audio fields only")
		}
		if r.Widget != "" && !slices.Contains(t.Widgets, r.Widget) {
			return bad("widget %q does not show %s values (it takes one of %s)", r.Widget, t.Name, strings.Join(t.Widgets, ", "))
		}
		if r.Default != nil {
			v := validateValue(f, r.Default)
			if s, ok := r.Default.(string); ok && t.Kind == KindLocalized {
				// HALO's CMS keeps a localized text's default as one
				// text, for every locale (format.default: "pen").
				v = checkText(f, s)
			}
			if v != nil {
				return bad("the default value is not valid: %s", v.Message)
			}
		}
	}
	return nil
}

func validateSpec(s ModuleSpec) (ModuleSpec, error) {
	name, err := ValidateModuleName(s.Name)
	if err != nil {
		return s, err
	}
	s.Name = name
	for _, t := range s.Tags {
		if strings.TrimSpace(t.Name) == "" && t.ID == "" {
			return s, fault.Invalidf("a tag needs an id or a name").With("field", "tags")
		}
	}
	return s, ValidateFields(s.Fields)
}

// CreateModule decides the creation of a module of an app. The name
// reservation (ModuleNameClaimed) goes to its own stream; the caller
// appends both atomically.
func CreateModule(existing Module, id, app string, s ModuleSpec, by string) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("module %s already exists", id)
	}
	s, err := validateSpec(s)
	if err != nil {
		return nil, err
	}
	return []any{ModuleCreated{ModuleID: id, App: app, Name: s.Name, Single: s.Single, Tags: s.Tags,
		Fields: s.Fields, ModuleType: s.ModuleType, By: by}}, nil
}

// Change decides the events that turn m into spec: a rename, a new
// configuration, new fields. Whether the new fields fit the module's
// existing items, and whether its items allow the single-item flag
// (SingleItem.Configure), are the caller's checks (they need the items).
func (m Module) Change(s ModuleSpec, by string) ([]any, error) {
	if !m.exists || m.Deleted {
		return nil, fault.NotFoundf("module %s not found", m.ID)
	}
	s, err := validateSpec(s)
	if err != nil {
		return nil, err
	}
	var evs []any
	if s.Name != m.Name {
		evs = append(evs, ModuleRenamed{ModuleID: m.ID, App: m.App, Name: s.Name, By: by})
	}
	if s.Single != m.Single || !slices.Equal(s.Tags, m.Tags) {
		evs = append(evs, ModuleConfigured{ModuleID: m.ID, App: m.App, Single: s.Single, Tags: s.Tags, By: by})
	}
	if !fieldsEqual(s.Fields, m.Fields) {
		evs = append(evs, ModuleFieldsChanged{ModuleID: m.ID, App: m.App, Fields: s.Fields, By: by})
	}
	return evs, nil
}

func fieldsEqual(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Name != y.Name || x.Description != y.Description || x.Type != y.Type ||
			x.Required != y.Required || x.Localized != y.Localized || !rulesEqual(x.Rules, y.Rules) {
			return false
		}
	}
	return true
}

func rulesEqual(a, b FieldRules) bool {
	eqi := func(x, y *int) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqf := func(x, y *float64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eqi(a.MinLength, b.MinLength) && eqi(a.MaxLength, b.MaxLength) && a.Pattern == b.Pattern &&
		eqf(a.Min, b.Min) && eqf(a.Max, b.Max) && slices.Equal(a.Values, b.Values) &&
		sameValue(a.Default, b.Default) && a.Module == b.Module && slices.Equal(a.MediaTypes, b.MediaTypes) &&
		a.Widget == b.Widget
}

// Delete decides the logical deletion of a module.
func (m Module) Delete(by string) ([]any, error) {
	if !m.exists || m.Deleted {
		return nil, fault.NotFoundf("module %s not found", m.ID)
	}
	return []any{ModuleDeleted{ModuleID: m.ID, App: m.App, By: by}}, nil
}

// ModuleName is a module-name reservation (stream ModuleNameStream).
type ModuleName struct{ Module string }

// Apply folds one event into the reservation.
func (n ModuleName) Apply(ev any) ModuleName {
	switch e := ev.(type) {
	case ModuleNameClaimed:
		n.Module = e.ModuleID
	case ModuleNameReleased:
		n.Module = ""
	}
	return n
}

// ModuleType is a reusable field configuration.
type ModuleType struct {
	ID      string
	Name    string
	Single  bool
	Fields  []Field
	Deleted bool
	exists  bool
}

// Exists reports whether the type was ever saved.
func (t ModuleType) Exists() bool { return t.exists && !t.Deleted }

// Apply folds one event into the state.
func (t ModuleType) Apply(ev any) ModuleType {
	switch e := ev.(type) {
	case ModuleTypeSaved:
		t = ModuleType{ID: e.TypeID, Name: e.Name, Single: e.Single, Fields: e.Fields, exists: true}
	case ModuleTypeDeleted:
		t.Deleted = true
	}
	return t
}

// Save decides the creation or replacement of module type id (1 to 64
// letters, digits, '-' or '_').
func (t ModuleType) Save(id, name string, single bool, fields []Field) ([]any, error) {
	if !validID(id) {
		return nil, fault.Invalidf("module type id must be 1 to 64 letters, digits, '-' or '_'").With("field", "id")
	}
	name, err := ValidateModuleName(name)
	if err != nil {
		return nil, err
	}
	if err := ValidateFields(fields); err != nil {
		return nil, err
	}
	if t.Exists() && t.Name == name && t.Single == single && fieldsEqual(t.Fields, fields) {
		return nil, nil
	}
	return []any{ModuleTypeSaved{TypeID: id, Name: name, Single: single, Fields: fields}}, nil
}

// Delete decides the deletion of a module type.
func (t ModuleType) Delete() ([]any, error) {
	if !t.Exists() {
		return nil, fault.NotFoundf("module type %s not found", t.ID)
	}
	return []any{ModuleTypeDeleted{TypeID: t.ID}}, nil
}

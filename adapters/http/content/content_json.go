package content

import (
	"encoding/json"
	"strings"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Wire shapes of the content API (wire reference §4–5).

func tagsJSONOf(tags []rmcontent.Tag) []httpapi.TagJSON {
	out := make([]httpapi.TagJSON, len(tags))
	for i, t := range tags {
		out[i] = httpapi.TagJSON(t)
	}
	return out
}

// rulesJSON are a field's own rules.
type rulesJSON struct {
	MinLength  *int     `json:"minLength,omitempty"`
	MaxLength  *int     `json:"maxLength,omitempty"`
	Pattern    string   `json:"pattern,omitempty"`
	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
	Values     []string `json:"values,omitempty"`
	Default    any      `json:"default,omitempty"`
	Module     string   `json:"module,omitempty"`
	MediaTypes []string `json:"mediaTypes,omitempty"`
	Widget     string   `json:"widget,omitempty"`
}

type ruleJSON struct {
	Rule   string `json:"rule"`
	Params []any  `json:"params"`
	Error  string `json:"error"`
}

type fieldTypeJSON struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Rules       []ruleJSON `json:"rules"`
	IsLongValue bool       `json:"isLongValue"`
	CreatedAt   int64      `json:"createdAt"`
	UpdatedAt   int64      `json:"updatedAt"`
	DeletedAt   *int64     `json:"deletedAt"`
}

// catalogDate is the creation date the field-type catalog reports.
var catalogDate = time.Date(2016, 11, 15, 0, 0, 0, 0, time.UTC).UnixMilli()

func fieldTypeOf(id string) fieldTypeJSON {
	t, _ := content.FieldTypeByID(id)
	rules := make([]ruleJSON, len(t.Rules))
	for i, r := range t.Rules {
		rules[i] = ruleJSON{Rule: r.Rule, Params: r.Params, Error: r.Error}
	}
	return fieldTypeJSON{ID: t.ID, Name: t.Name, Rules: rules, IsLongValue: t.LongValue, CreatedAt: catalogDate, UpdatedAt: catalogDate}
}

type fieldJSON struct {
	ID          string         `json:"id"`
	Module      string         `json:"module"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Format      map[string]any `json:"format"`
	FieldType   fieldTypeJSON  `json:"fieldType"`
	Type        string         `json:"type"`
	Required    bool           `json:"required"`
	Localized   bool           `json:"localized"`
	Rules       rulesJSON      `json:"rules"`
	CustomerID  int            `json:"customerId"`
	CreatedAt   int64          `json:"createdAt"`
	UpdatedAt   int64          `json:"updatedAt"`
	DeletedAt   *int64         `json:"deletedAt"`
}

func fieldJSONOf(module string, f content.Field, created, updated int64) fieldJSON {
	format := map[string]any{}
	if len(f.Rules.Values) > 0 {
		format["values"] = f.Rules.Values
	}
	if f.Rules.Default != nil {
		format["default"] = f.Rules.Default
	}
	r := f.Rules
	return fieldJSON{ID: f.ID, Module: module, Name: f.Name, Description: f.Description, Format: format,
		FieldType: fieldTypeOf(f.Type), Type: f.Type, Required: f.Required, Localized: f.Localized,
		Rules: rulesJSON{MinLength: r.MinLength, MaxLength: r.MaxLength, Pattern: r.Pattern, Min: r.Min, Max: r.Max,
			Values: r.Values, Default: r.Default, Module: r.Module, MediaTypes: r.MediaTypes, Widget: r.Widget},
		CustomerID: httpapi.CustomerID, CreatedAt: created, UpdatedAt: updated}
}

// fieldBody is a field as clients send it. It accepts the keys a field
// has in responses, so that a client can send back what it read.
type fieldBody struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Type        string          `json:"type"`
	FieldType   json.RawMessage `json:"fieldType"`
	Required    bool            `json:"required"`
	Localized   bool            `json:"localized"`
	Rules       *rulesJSON      `json:"rules"`
	Format      json.RawMessage `json:"format"`
	Module      any             `json:"module"`
	CustomerID  any             `json:"customerId"`
	CreatedAt   any             `json:"createdAt"`
	UpdatedAt   any             `json:"updatedAt"`
	DeletedAt   any             `json:"deletedAt"`
}

func (b fieldBody) field(i int) (content.Field, error) {
	f := content.Field{ID: b.ID, Name: b.Name, Description: b.Description, Type: b.Type, Required: b.Required, Localized: b.Localized}
	if f.Type == "" && len(b.FieldType) > 0 {
		var asID string
		var asObj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b.FieldType, &asID) == nil {
			f.Type = asID
		} else if json.Unmarshal(b.FieldType, &asObj) == nil {
			f.Type = asObj.ID
		}
	}
	if f.Type == "" {
		return f, fault.Invalidf("field %d: type (a field type id) is required", i).With("position", i)
	}
	if b.Rules != nil {
		r := b.Rules
		f.Rules = content.FieldRules{MinLength: r.MinLength, MaxLength: r.MaxLength, Pattern: r.Pattern, Min: r.Min,
			Max: r.Max, Values: r.Values, Default: r.Default, Module: r.Module, MediaTypes: r.MediaTypes, Widget: r.Widget}
	}
	if len(b.Format) > 0 && string(b.Format) != "null" && string(b.Format) != `""` {
		var format struct {
			Values  []any `json:"values"`
			Default any   `json:"default"`
		}
		d := json.NewDecoder(strings.NewReader(string(b.Format)))
		d.UseNumber()
		if err := d.Decode(&format); err != nil {
			return f, fault.Invalidf("field %q: format must be an object {values, default}", f.Name).With("field", f.Name)
		}
		if len(f.Rules.Values) == 0 {
			for _, v := range format.Values {
				switch x := v.(type) {
				case string:
					f.Rules.Values = append(f.Rules.Values, x)
				case json.Number:
					f.Rules.Values = append(f.Rules.Values, x.String())
				default:
					return f, fault.Invalidf("field %q: format.values must be strings", f.Name).With("field", f.Name)
				}
			}
		}
		if f.Rules.Default == nil {
			f.Rules.Default = format.Default
		}
	}
	return f, nil
}

func fieldsFromBody(in []fieldBody) ([]content.Field, error) {
	out := make([]content.Field, 0, len(in))
	for i, b := range in {
		f, err := b.field(i)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

type moduleJSON struct {
	ID            string            `json:"id"`
	App           string            `json:"app"`
	Name          string            `json:"name"`
	IsSingle      bool              `json:"isSingle"`
	CustomerID    int               `json:"customerId"`
	Tags          []httpapi.TagJSON `json:"tags"`
	PushTemplates []string          `json:"pushTemplates"`
	Importers     []any             `json:"importers"`
	Exporters     []any             `json:"exporters"`
	ModuleType    *string           `json:"moduleType"`
	ExternalID    *string           `json:"externalId"`
	CreatedAt     int64             `json:"createdAt"`
	UpdatedAt     *int64            `json:"updatedAt"`
	DeletedAt     *int64            `json:"deletedAt"`
	CreatedBy     string            `json:"createdBy"`
	UpdatedBy     *string           `json:"updatedBy"`
	DeletedBy     *string           `json:"deletedBy"`
	Fields        *[]fieldJSON      `json:"fields,omitempty"` // with withFields only, [] when none
}

func moduleJSONOf(m rmcontent.Module, withFields bool) moduleJSON {
	j := moduleJSON{ID: m.ID, App: m.App, Name: m.Name, IsSingle: m.Single, CustomerID: httpapi.CustomerID, Tags: tagsJSONOf(m.Tags),
		PushTemplates: []string{}, Importers: []any{}, Exporters: []any{}, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		DeletedAt: m.DeletedAt, CreatedBy: m.CreatedBy, UpdatedBy: m.UpdatedBy, DeletedBy: m.DeletedBy}
	if m.ModuleType != "" {
		j.ModuleType = &m.ModuleType
	}
	if withFields {
		fields := make([]fieldJSON, len(m.Fields))
		updated := m.CreatedAt
		if m.UpdatedAt != nil {
			updated = *m.UpdatedAt
		}
		for i, f := range m.Fields {
			fields[i] = fieldJSONOf(m.ID, f, m.CreatedAt, updated)
		}
		j.Fields = &fields
	}
	return j
}

// moduleBody creates or replaces a module; it accepts the keys of the
// module's response shape.
type moduleBody struct {
	App           string            `json:"app"`
	Name          *string           `json:"name"`
	IsSingle      bool              `json:"isSingle"`
	Tags          []httpapi.TagBody `json:"tags"`
	Fields        []fieldBody       `json:"fields"`
	ModuleType    *string           `json:"moduleType"`
	ID            any               `json:"id"`
	CustomerID    any               `json:"customerId"`
	PushTemplates any               `json:"pushTemplates"`
	Importers     any               `json:"importers"`
	Exporters     any               `json:"exporters"`
	ExternalID    any               `json:"externalId"`
	CreatedAt     any               `json:"createdAt"`
	UpdatedAt     any               `json:"updatedAt"`
	DeletedAt     any               `json:"deletedAt"`
	CreatedBy     any               `json:"createdBy"`
	UpdatedBy     any               `json:"updatedBy"`
	DeletedBy     any               `json:"deletedBy"`
}

func (b moduleBody) spec() (content.ModuleSpec, error) {
	if b.Name == nil {
		return content.ModuleSpec{}, fault.Invalidf("name is required").With("field", "name")
	}
	tags, err := httpapi.TagsFromBody(b.Tags)
	if err != nil {
		return content.ModuleSpec{}, err
	}
	fields, err := fieldsFromBody(b.Fields)
	if err != nil {
		return content.ModuleSpec{}, err
	}
	return content.ModuleSpec{Name: *b.Name, Single: b.IsSingle, Tags: tags, Fields: fields}, nil
}

type instanceJSON struct {
	ID           string            `json:"id"`
	Module       string            `json:"module"`
	Name         string            `json:"name"`
	Values       any               `json:"values"` // map[string]any, or json.RawMessage as stored
	Tags         []httpapi.TagJSON `json:"tags"`
	CreatedAt    int64             `json:"createdAt"`
	UpdatedAt    *int64            `json:"updatedAt"`
	PublishedAt  *int64            `json:"publishedAt"`
	RemovedAt    *int64            `json:"removedAt"`
	ArchivedAt   *int64            `json:"archivedAt"`
	DeletedAt    *int64            `json:"deletedAt"`
	CreatedBy    string            `json:"createdBy"`
	UpdatedBy    *string           `json:"updatedBy"`
	DeletedBy    *string           `json:"deletedBy"`
	CustomerID   int               `json:"customerId"`
	PushSchedule any               `json:"pushSchedule"`
	ExternalID   *string           `json:"externalId"`
	Revision     int64             `json:"revision"`
}

func instanceJSONOf(it rmcontent.Item) instanceJSON {
	j := instanceJSON{ID: it.ID, Module: it.Module, Name: it.Name, Values: it.Values, Tags: tagsJSONOf(it.Tags),
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, PublishedAt: it.PublishedAt, RemovedAt: it.RemovedAt,
		ArchivedAt: it.ArchivedAt, DeletedAt: it.DeletedAt, CreatedBy: it.CreatedBy, UpdatedBy: it.UpdatedBy,
		DeletedBy: it.DeletedBy, CustomerID: httpapi.CustomerID, Revision: it.Revision}
	switch {
	case it.RawValues != nil:
		j.Values = json.RawMessage(it.RawValues)
	case it.Values == nil:
		j.Values = map[string]any{}
	}
	if j.Tags == nil {
		j.Tags = []httpapi.TagJSON{}
	}
	if it.ExternalID != "" {
		j.ExternalID = &it.ExternalID
	}
	return j
}

// asMap turns a wire value into the map a fault's extra holds.
func asMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	m := map[string]any{}
	_ = json.Unmarshal(b, &m)
	return m
}

// instanceBody is an instance as the SDKs send it (Android leaves nulls
// out, iOS sends every key). Keys that only the server sets are accepted
// and ignored, except revision, which guards against lost updates.
type instanceBody struct {
	ID           string            `json:"id"`
	Module       string            `json:"module"`
	Name         *string           `json:"name"`
	Values       map[string]any    `json:"values"`
	Tags         []httpapi.TagBody `json:"tags"`
	PublishedAt  any               `json:"publishedAt"`
	RemovedAt    any               `json:"removedAt"`
	ArchivedAt   any               `json:"archivedAt"`
	ExternalID   any               `json:"externalId"`
	Revision     *int64            `json:"revision"`
	CreatedAt    any               `json:"createdAt"`
	UpdatedAt    any               `json:"updatedAt"`
	DeletedAt    any               `json:"deletedAt"`
	CreatedBy    any               `json:"createdBy"`
	UpdatedBy    any               `json:"updatedBy"`
	DeletedBy    any               `json:"deletedBy"`
	CustomerID   any               `json:"customerId"`
	PushSchedule any               `json:"pushSchedule"`
}

func (b instanceBody) input() (cmdcontent.ItemInput, error) {
	var in cmdcontent.ItemInput
	in.ID, in.Module, in.Revision = b.ID, b.Module, b.Revision
	if b.Name != nil {
		in.Content.Name = *b.Name
	}
	in.Content.Values = b.Values
	tags, err := httpapi.TagsFromBody(b.Tags)
	if err != nil {
		return in, err
	}
	in.Content.Tags = tags
	switch x := b.ExternalID.(type) {
	case nil:
	case string:
		in.Content.ExternalID = x
	case json.Number:
		in.Content.ExternalID = x.String()
	default:
		return in, fault.Invalidf("externalId must be a string or a number").With("field", "externalId")
	}
	for _, d := range []struct {
		v    any
		name string
		dst  *time.Time
	}{{b.PublishedAt, "publishedAt", &in.Dates.PublishedAt}, {b.RemovedAt, "removedAt", &in.Dates.RemovedAt},
		{b.ArchivedAt, "archivedAt", &in.Dates.ArchivedAt}} {
		t, err := content.ParseMillis(d.v, d.name)
		if err != nil {
			return in, err
		}
		*d.dst = t
	}
	return in, nil
}

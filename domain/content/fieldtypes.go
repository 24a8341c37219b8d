// Package content is the content context: modules (content structures)
// with their ordered structure fields, module types, and content items
// ("instances") with their publication states and history. Pure.
package content

// Kind is how a field type's values are shaped and checked.
type Kind int

const (
	KindText      Kind = iota + 1 // a string (Text, Long text)
	KindNumber                    // a JSON number
	KindURL                       // a string holding an absolute http(s) URL
	KindYoutube                   // a YouTube URL
	KindTimestamp                 // epoch milliseconds (Date, Time)
	KindBoolean                   // true or false
	KindColor                     // #rgb or #rrggbb
	KindRelations                 // an array of instance ids
	KindRelation                  // one instance id
	KindObject                    // a JSON object
	KindList                      // a JSON array
	KindLocalized                 // an object of locale → string
	KindChoices                   // an array of strings out of the field's allowed values
	KindChoice                    // one string out of the field's allowed values
)

// Scalar reports whether values of this kind are one string, number or
// boolean, so they can be compared, sorted and searched.
func (k Kind) Scalar() bool {
	switch k {
	case KindObject, KindList, KindLocalized, KindRelations, KindChoices:
		return false
	}
	return true
}

// Multi reports whether values of this kind are arrays of scalars, each of
// which is searchable.
func (k Kind) Multi() bool { return k == KindRelations || k == KindChoices }

// Relation reports whether values of this kind name other items (a single
// or a multiple relation).
func (k Kind) Relation() bool { return k == KindRelation || k == KindRelations }

// Numeric reports whether values of this kind are numbers.
func (k Kind) Numeric() bool { return k == KindNumber || k == KindTimestamp }

// Rule is one validation rule of a field type, as HALO publishes it.
type Rule struct {
	Rule   string
	Params []any
	Error  string // "validator.N"
}

// FieldType is one of HALO's 21 structure-field types.
type FieldType struct {
	ID        string
	Name      string
	Kind      Kind
	LongValue bool
	Rules     []Rule
	// Widgets are the editors the CMS may show values of this type with
	// (a field's Rules.Widget); the first is the default. The CMS's own
	// catalog (adapters/web/src/lib/fieldTypes.ts) lists the same, which
	// a test of adapters/web checks.
	Widgets []string
}

const (
	urlPattern     = `^(https?:\/\/)[^\s]+$`
	youtubePattern = `^(https?:\/\/)?(www\.|m\.)?(youtube\.com|youtu\.be)\/.+$`
)

// Error codes of HALO's validators.
const (
	ErrURL         = "validator.1"
	ErrYoutube     = "validator.2"
	ErrNumber      = "validator.3"
	ErrTimestamp   = "validator.4"
	ErrBoolean     = "validator.6"
	ErrColor       = "validator.7"
	ErrString      = "validator.8"
	ErrRelation    = "validator.9"
	ErrLength      = "validator.10"
	ErrObject      = "validator.11"
	ErrArray       = "validator.12"
	ErrLanguages   = "validator.13"
	ErrLocalized   = "validator.14"
	ErrChoices     = "validator.15"
	ErrChoice      = "validator.16"
	ErrRequired    = "validator.required"
	ErrUnknown     = "validator.unknown"
	ErrPattern     = "validator.pattern"
	ErrRange       = "validator.range"
	ErrAllowed     = "validator.allowed"
	ErrMediaType   = "validator.mediaType"
	ErrTargetModel = "validator.relationTarget"
	ErrNUL         = "validator.nul"
)

func typ(n int, name string, kind Kind, long bool, widgets []string, rules ...Rule) FieldType {
	id := "0000000000000000000000"
	if n < 10 {
		id += "0"
	}
	id += itoa(n)
	return FieldType{ID: id, Name: name, Kind: kind, LongValue: long, Rules: rules, Widgets: widgets}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// w is a list of widgets.
func w(names ...string) []string { return names }

var (
	isString = Rule{Rule: "custom||isString", Params: []any{}, Error: ErrString}
	isURL    = Rule{Rule: "matches", Params: []any{urlPattern}, Error: ErrURL}
)

// FieldTypes is HALO's field-type catalog, ids …001 to …021.
var FieldTypes = []FieldType{
	typ(1, "Text", KindText, false, w("text"), isString, Rule{Rule: "isLength", Params: []any{0, 1000}, Error: ErrLength}),
	typ(2, "Number", KindNumber, false, w("number"), Rule{Rule: "custom||isNumber", Params: []any{}, Error: ErrNumber}),
	typ(3, "Website", KindURL, true, w("url", "document"), isURL),
	typ(4, "Youtube", KindYoutube, true, w("youtube"), Rule{Rule: "matches", Params: []any{youtubePattern}, Error: ErrYoutube}),
	typ(5, "Image", KindURL, true, w("image"), isURL),
	typ(6, "Date", KindTimestamp, false, w("datetime", "date"), Rule{Rule: "custom||isTimestamp", Params: []any{}, Error: ErrTimestamp}),
	typ(7, "Time", KindTimestamp, false, w("time"), Rule{Rule: "custom||isTimestamp", Params: []any{}, Error: ErrTimestamp}),
	typ(8, "Boolean", KindBoolean, false, w("boolean"), Rule{Rule: "custom||isStrictBoolean", Params: []any{}, Error: ErrBoolean}),
	typ(9, "Color", KindColor, false, w("color"), Rule{Rule: "isHexColor", Params: []any{}, Error: ErrColor}),
	typ(10, "Multiple relation", KindRelations, false, w("relations"), Rule{Rule: "custom||isRelation", Params: []any{}, Error: ErrRelation}),
	typ(11, "Single relation", KindRelation, false, w("relation"), isString),
	typ(12, "Long text", KindText, true, w("textarea", "richtext", "markdown", "html"), isString),
	typ(13, "Object", KindObject, true, w("json", "location"), Rule{Rule: "custom||isJSONObject", Params: []any{}, Error: ErrObject}),
	typ(14, "List", KindList, true, w("list", "tags", "json"), Rule{Rule: "custom||isJSONArray", Params: []any{}, Error: ErrArray}),
	typ(15, "Localized text", KindLocalized, true, w("localized"),
		Rule{Rule: "custom||isJSONObject", Params: []any{}, Error: ErrObject},
		Rule{Rule: "custom||hasAllKeyLanguage", Params: []any{}, Error: ErrLanguages},
		Rule{Rule: "custom||allObjectValuesAreStringValidator", Params: []any{}, Error: ErrLocalized}),
	typ(16, "Video", KindURL, true, w("video"), isURL),
	typ(17, "Multiple choice", KindChoices, true, w("checkboxes", "multiselect"), Rule{Rule: "custom||multipleChoiceValidator", Params: []any{}, Error: ErrChoices}),
	typ(18, "Single choice", KindChoice, true, w("radio", "select"), Rule{Rule: "custom||singleChoiceValidator", Params: []any{}, Error: ErrChoice}),
	typ(19, "Multiple select dropdown", KindChoices, true, w("multiselect", "checkboxes"), Rule{Rule: "custom||multipleChoiceValidator", Params: []any{}, Error: ErrChoices}),
	typ(20, "Single select dropdown", KindChoice, true, w("select", "radio"), Rule{Rule: "custom||singleChoiceValidator", Params: []any{}, Error: ErrChoice}),
	typ(21, "Audio", KindURL, true, w("audio"), isURL),
}

// FieldTypeByID finds a field type of the catalog.
func FieldTypeByID(id string) (FieldType, bool) {
	for _, t := range FieldTypes {
		if t.ID == id {
			return t, true
		}
	}
	return FieldType{}, false
}

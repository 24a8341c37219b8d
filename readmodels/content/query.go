package content

import "github.com/halocms/halocms/domain/content"

// Expr is a node of a searchValues/metaSearch tree: either a condition
// (Cond "and"/"or" with Operands) or an operation.
type Expr struct {
	Cond     string
	Operands []*Expr
	Op       string // "=", "!=", ">", ">=", "<", "<=", "in", "!in", "like"
	Property string
	Value    any    // string, json.Number/float64, bool, nil, []any
	Type     string // "string", "number", "date", "null" or ""
}

// Relation selects items whose relation field Field points at one of IDs;
// an id "*" means any related item.
type Relation struct {
	Field string
	IDs   []string
}

// SortKey is one key of a sort: exactly one of Attr (name, createdAt,
// updatedAt, publishedAt, removedAt, archivedAt, deletedAt, createdBy,
// updatedBy, deletedBy) or Field (a values field name).
type SortKey struct {
	Attr  string
	Field string
	Desc  bool
}

// Query is a content search (§5.2 of the wire reference), already resolved
// by the caller into module ids, field definitions and visibility.
type Query struct {
	AllApps        bool     // admin: every app
	Apps           []string // otherwise: only items of these apps,
	VisibleModules []string // or of these modules,
	VisibleItems   []string // or these items (the caller's read rights)
	PublishedOnly  bool     // app tokens: only items published at Now
	ModuleIDs      []string // nil = all modules the caller sees; non-nil empty = nothing
	InstanceIDs    []string // nil = no filter; non-nil empty = nothing
	SearchValues   *Expr
	MetaSearch     *Expr
	RelatedTo      []Relation
	SegmentTags    []Tag
	SegmentTotal   bool      // total: item has every tag; partial (default): at least one
	Sort           []SortKey // empty: createdAt asc, then id
	Offset, Limit  int       // Limit 0 = no limit
	Count          bool      // also compute the total number of matches
	// Locale resolves localized values (see localizeItems) and makes
	// conditions and sorts on them use that locale.
	Locale string
	// Fields are the field definitions by name of the modules searched
	// (for a name several modules use, one of them): the filters and the
	// sort are compiled with them, and when the search names one module
	// its items are localized with them.
	Fields map[string]content.Field
	// ModuleFields are, for a search of several modules or of all, each
	// searched module's field definitions, by module id: a searchValues
	// tree that names a field two of them define differently (its kind,
	// or whether it is indexed) is compiled once per group of modules
	// that define its fields alike, so that each item is judged by its
	// own module's fields (see valuesByModule). Without them, Fields'
	// definition holds for every module.
	ModuleFields map[string]map[string]content.Field
	// Slots and Revision are the slot map and the revision of the one
	// module searched as the caller read it (Module.Slots and .Revision),
	// or nil and 0. With them, a search that pageWithTotal compiles takes
	// one round trip (see pageInOneTrip).
	Slots    map[string]string
	Revision int64
	// Known says that the caller took the module (Fields, Slots,
	// Revision, and whether the caller may see it) from KnownModule, so
	// that it may have changed since: the search is then answered only
	// by the one statement of pageInOneTrip, which checks the revision;
	// when it cannot answer, Search returns ErrModuleUnverified and the
	// caller reads the module afresh.
	Known          bool
	Now            int64 // ms; the instant published/expired are judged at
	IncludeDeleted bool  // when false, deleted items never match unless MetaSearch mentions deletedAt
	// RawValues leaves the items' values as stored (Item.RawValues), for
	// a caller that passes them on unchanged: decoding them was a fifth
	// of a search's CPU in the server. Ignored with a Locale, whose values
	// are resolved.
	RawValues bool
	// FreshnessOf is an app whose Freshness the search also reads, in its
	// own snapshot (Result.Freshness): an answer cached under it was
	// computed from exactly that state of the app.
	FreshnessOf string

	trip *tripPlan // see oneTripStatement
}

// Result is a page of items, and the number of matches when asked for.
type Result struct {
	Items []Item
	Total int
	// Freshness is Query.FreshnessOf's, as of the search's snapshot.
	Freshness Freshness
	// InMemory: the page and the total came from the in-memory copy of
	// the module (see memIndex); the page's items from PostgreSQL or, when
	// the copy keeps them, from the copy. Items kept by the copy are
	// shared with later answers: callers must not modify the Items, their
	// slices or what their pointers point at.
	InMemory bool
}

package content

import (
	"testing"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// fuzzFields are the fields of the module the search fuzzer searches: one
// of each kind, the first four scalars with a typed column (fuzzSlots).
var fuzzFields = map[string]content.Field{}

var fuzzSlots = map[string]string{"title": "t1", "category": "t2", "price": "n1", "when": "n2"}

func init() {
	for name, typ := range map[string]string{
		"title": "01", "price": "02", "site": "03", "when": "06", "clock": "07", "active": "08", "color": "09",
		"related": "10", "author": "11", "body": "12", "meta": "13", "list": "14", "label": "15", "clip": "16",
		"cats": "17", "kind": "18", "category": "01", "headline": "01",
	} {
		f := content.Field{ID: "f-" + name, Name: name, Type: "0000000000000000000000" + typ}
		if name == "headline" {
			f.Localized = true
		}
		if name == "cats" || name == "kind" {
			f.Rules.Values = []string{"a", "B", "ß", "50%"}
		}
		fuzzFields[name] = f
	}
}

// FuzzSearchExpr feeds arbitrary searchValues and metaSearch trees to the
// parser, the SQL compiler (one module with typed columns, several
// modules, the one-trip and fields-only shortcuts) and the in-memory
// planner and matcher: nothing panics, and every refusal is a 400.
func FuzzSearchExpr(f *testing.F) {
	for _, s := range [][2]string{
		{`{"operation": "=", "property": "category", "value": "world", "type": "string"}`, ``},
		{`{"condition": "and", "operands": [{"operation": ">=", "property": "price", "value": 10, "type": "number"},
			{"operation": "like", "property": "title", "value": "%amber%"}]}`,
			`{"operation": "<=", "property": "publishedAt", "value": 1700000000000, "type": "date"}`},
		{`{"condition": "or", "operands": [{"operation": "in", "property": "cats", "value": ["a", "ß"]},
			{"operation": "!in", "property": "price", "value": [1, 2.5, null], "type": "number"}]}`, `null`},
		{`{"operation": "=", "property": "headline", "value": "x"}`, `{"operation": "=", "property": "deletedAt", "value": null, "type": "null"}`},
		{`{"operation": "!=", "property": "active", "value": true, "type": "boolean"}`, `{"operation": "like", "property": "name", "value": "a_b"}`},
		{`{"operation": "<", "property": "when", "value": "2024-01-01T00:00:00Z", "type": "date"}`, `{"operation": "in", "property": "createdBy", "value": ["u1"]}`},
		{`{"operation": "=", "property": "meta", "value": {"a": 1}}`, ``},
		{`{"operation": "=", "property": "price", "value": 9007199254740993}`, ``},
		{`{"operation": "=", "property": "price", "value": 1e400}`, ``},
		{`{"condition": "and", "operands": []}`, `[]`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	m := productsCopy(64)
	f.Fuzz(func(t *testing.T, values, meta []byte) {
		sv, err := ParseExpr(values, "searchValues")
		if err != nil {
			refused(t, "ParseExpr(searchValues)", err)
			return
		}
		ms, err := ParseExpr(meta, "metaSearch")
		if err != nil {
			refused(t, "ParseExpr(metaSearch)", err)
			return
		}
		one := Query{Apps: []string{"a1"}, PublishedOnly: true, ModuleIDs: []string{"m1"}, SearchValues: sv, MetaSearch: ms,
			Sort: []SortKey{{Field: "values.price"}}, Limit: 10, Count: true, Fields: fuzzFields, Slots: fuzzSlots,
			Revision: 1, Now: 1_700_000_000_000}
		if _, err := compile(&one, fuzzSlots); err != nil {
			refused(t, "compile", err)
		}
		all := one
		all.ModuleIDs, all.Slots, all.Revision = nil, nil, 0
		all.ModuleFields = map[string]map[string]content.Field{"m1": fuzzFields, "m2": {"price": {Name: "price", Type: "000000000000000000000001"}}}
		if _, err := compileFull(&all, true, nil, map[string]map[string]string{"m1": fuzzSlots}); err != nil {
			refused(t, "compileFull", err)
		}
		q := one
		if _, _, ok := oneTripStatement(&q); !ok {
			if !singleEquality(q.SearchValues) {
				return
			}
			if _, _, ok := fieldsFilter(&q, q.Slots, false); !ok {
				return
			}
		}
		cond, sorts, ok := m.plan(&q)
		if !ok {
			return
		}
		if rows, ok := m.match(&cond, q.Now); ok {
			m.page(rows, sorts, q.Offset, q.Limit)
		}
	})
}

// refused fails t unless err is a refusal the HTTP layer answers with 400.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if k := fault.KindOf(err); k != fault.Invalid {
		t.Fatalf("%s: %v (kind %v), want an Invalid fault", what, err, k)
	}
}
